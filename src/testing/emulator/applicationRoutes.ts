// The REST routes of a bot's application (API v10): the application itself and its commands, global
// and in the emulated guild. A bot's application id is its user id.
import { DiscordError } from "./errors.js";
import { guild, noContent, ok, param, type RouteContext, type RouteSpec } from "./routeKit.js";
import { applicationJson } from "./shapes.js";

/** The application a path names: only the calling bot's own (403 / 50001 for any other). */
function application(ctx: RouteContext): string {
  const id = param(ctx, 0);
  if (id !== ctx.userId) throw new DiscordError(403, 50001, "Missing Access");
  return id;
}

/** The guild of a guild-command path (its second id), checked. */
function commandGuild(ctx: RouteContext): string {
  const id = param(ctx, 1);
  guild(ctx, id);
  return id;
}

const GLOBAL = "/applications/{application_id}/commands";
const GUILD = "/applications/{application_id}/guilds/{guild_id}/commands";

/** Created: 201; an existing command of the same name updated: 200 (as Discord answers a POST). */
function upsert(ctx: RouteContext, inGuild: boolean): { status: number; body: unknown } {
  const applicationId = application(ctx);
  const guildId = inGuild ? commandGuild(ctx) : undefined;
  const { command, created } = ctx.state.commands.upsert(applicationId, guildId, ctx.body);
  return { status: created ? 201 : 200, body: command };
}

export const applicationRoutes: RouteSpec[] = [
  {
    method: "GET",
    path: "/oauth2/applications/@me",
    handler: (ctx) => ok(applicationJson(ctx.state, ctx.userId)),
  },
  { method: "GET", path: GLOBAL, handler: (ctx) => ok(ctx.state.commands.list(application(ctx))) },
  { method: "POST", path: GLOBAL, group: "commands", handler: (ctx) => upsert(ctx, false) },
  {
    method: "PUT",
    path: GLOBAL,
    listBody: true,
    handler: (ctx) => ok(ctx.state.commands.overwrite(application(ctx), undefined, ctx.list)),
  },
  {
    method: "PATCH",
    path: `${GLOBAL}/{command_id}`,
    handler: (ctx) => ok(ctx.state.commands.edit(application(ctx), undefined, param(ctx, 1), ctx.body)),
  },
  {
    method: "DELETE",
    path: `${GLOBAL}/{command_id}`,
    handler: (ctx) => {
      ctx.state.commands.remove(application(ctx), undefined, param(ctx, 1));
      return noContent();
    },
  },
  {
    method: "GET",
    path: GUILD,
    handler: (ctx) => ok(ctx.state.commands.list(application(ctx), commandGuild(ctx))),
  },
  { method: "POST", path: GUILD, group: "commands", handler: (ctx) => upsert(ctx, true) },
  {
    method: "PUT",
    path: GUILD,
    listBody: true,
    handler: (ctx) => ok(ctx.state.commands.overwrite(application(ctx), commandGuild(ctx), ctx.list)),
  },
];
