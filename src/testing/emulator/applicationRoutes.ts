// The REST routes of a bot's application (API v10): the application itself and its commands, global
// and in the emulated guild. A bot's application id is its user id.
import { noContent, ok, type RouteContext, type RouteSpec } from "./routeKit.js";
import { applicationJson } from "./shapes.js";

const GLOBAL = "/applications/{application_id}/commands";
const GUILD = "/applications/{application_id}/guilds/{guild_id}/commands";

/** Created: 201; an existing command of the same name updated: 200 (as Discord answers a POST). */
function upsert(ctx: RouteContext): { status: number; body: unknown } {
  const { command, created } = ctx.state.commands.upsert(ctx.userId, ctx.params.guild_id, ctx.body);
  return { status: created ? 201 : 200, body: command };
}

// A global command's path names no guild: `params.guild_id` is undefined there.
export const applicationRoutes: RouteSpec[] = [
  {
    method: "GET",
    path: "/oauth2/applications/@me",
    handler: (ctx) => ok(applicationJson(ctx.state, ctx.userId)),
  },
  ...[GLOBAL, GUILD].flatMap((path): RouteSpec[] => [
    {
      method: "GET",
      path,
      handler: (ctx) => ok(ctx.state.commands.list(ctx.userId, ctx.params.guild_id)),
    },
    { method: "POST", path, group: "commands", handler: upsert },
    {
      method: "PUT",
      path,
      listBody: true,
      handler: (ctx) => ok(ctx.state.commands.overwrite(ctx.userId, ctx.params.guild_id, ctx.list)),
    },
  ]),
  {
    method: "PATCH",
    path: `${GLOBAL}/{command_id}`,
    handler: (ctx) =>
      ok(ctx.state.commands.edit(ctx.userId, undefined, ctx.params.command_id ?? "", ctx.body)),
  },
  {
    method: "DELETE",
    path: `${GLOBAL}/{command_id}`,
    handler: (ctx) => {
      ctx.state.commands.remove(ctx.userId, undefined, ctx.params.command_id ?? "");
      return noContent();
    },
  },
];
