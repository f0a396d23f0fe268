import { request } from "node:http";
import {
  type AnyStateMachine,
  type AnyStateNode,
  createActor,
  createMachine,
  type InspectionEvent,
} from "xstate";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ActorView,
  type InspectorHello,
  type InspectorMessage,
  type InspectorServer,
  MAX_ACTORS,
  MAX_EVENTS,
  startInspectorServer,
} from "../../src/inspector/index.js";
import { DATA_LIMIT } from "../../src/inspector/InspectorModel.js";
import { activeStates, machineChart } from "../../src/inspector/statechart.js";
import { type A2ARuntime, createA2ARuntime } from "../../src/index.js";
import {
  a2aFlowMachine,
  collaborateMachine,
  mentionMachine,
  pingPongMachine,
  replyWaitMachine,
} from "../../src/machines/index.js";
import { BOTS, FakeDiscord, runtimeConfig, tempStateDir, waitUntil } from "../support/runtimeFakes.js";
import { ScriptedGateway } from "../../src/testing/index.js";
import { refusedFromNetwork } from "../support/loopbackOnly.js";
import { textLogger } from "../../src/runtime/logger.js";

let server: InspectorServer | undefined;
let runtime: A2ARuntime | undefined;
const streams: Array<{ close(): void }> = [];

afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  await runtime?.stop();
  await server?.close();
  runtime = server = undefined;
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function get(url: string, o: { method?: string; host?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: o.method ?? "GET", ...(o.host === undefined ? {} : { headers: { host: o.host } }) },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** A page's view of /events: every message parsed, and the state they add up to (as the page applies them). */
function subscribe(url: string) {
  const messages: InspectorMessage[] = [];
  const actors = new Map<string, ActorView>();
  let buffered = "";
  const req = request(`${url}events`, (res) => {
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      buffered += chunk;
      for (let end = buffered.indexOf("\n\n"); end >= 0; end = buffered.indexOf("\n\n")) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        for (const line of block.split("\n")) {
          if (!line.startsWith("data: ")) continue;
          const message = JSON.parse(line.slice(6)) as InspectorMessage;
          messages.push(message);
          if (message.kind === "hello") for (const a of message.actors) actors.set(a.sessionId, a);
          if (message.kind === "actor") actors.set(message.actor.sessionId, message.actor);
          if (message.kind === "drop") for (const id of message.sessionIds) actors.delete(id);
        }
      }
    });
  });
  req.on("error", () => {});
  req.end();
  const stream = { messages, actors, close: () => req.destroy() };
  streams.push(stream);
  return stream;
}

async function startRuntime(inspect: InspectorServer["inspect"]): Promise<A2ARuntime> {
  runtime = createA2ARuntime({
    stateDir: tempStateDir("a2a-inspector-"),
    config: runtimeConfig,
    gateway: new ScriptedGateway(),
    discord: new FakeDiscord(),
    inspect,
    logger: textLogger(() => {}),
  });
  await runtime.start();
  return runtime;
}

describe("startInspectorServer: what a page receives", () => {
  it("a page that connects late gets every actor, chart and recent event first, then the changes", async () => {
    server = await startInspectorServer();
    const r = await startRuntime(server.inspect);
    const sent = await r.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "코드 리뷰 해줘",
    });
    if (sent.status !== "sent") throw new Error(`discordSend: ${sent.status}`);

    const late = subscribe(server.url);
    await waitUntil(() => late.messages.length > 0, "the hello message");
    const hello = late.messages[0] as InspectorHello;
    expect(hello.kind).toBe("hello");
    const collaboration = hello.actors.find((a) => a.machineId === "collaborate");
    expect(collaboration).toMatchObject({
      state: "awaitingResponse",
      current: ["awaitingResponse"],
      active: [],
      status: "active",
    });
    expect(hello.actors.find((a) => a.machineId === "mention")).toMatchObject({
      id: "mention",
      parentSessionId: collaboration?.sessionId,
      state: "pending",
      current: ["pending"],
    });
    // Promise actors (postMention, createThread) are listed too, without a machine.
    expect(hello.actors.find((a) => a.id === "postMention")).toMatchObject({ state: "", status: "done" });
    expect(hello.actors.find((a) => a.id === "postMention")?.machineId).toBeUndefined();
    const charts = new Map(hello.machines.map((c) => [c.machineId, c]));
    expect(charts.get("collaborate")?.mermaid).toBe(machineChart(collaborateMachine).mermaid);
    expect(charts.get("mention")?.stateIds).toMatchObject({ pending: "pending", responded: "responded" });
    expect(hello.events).toContainEqual(
      expect.objectContaining({ type: "xstate.init", targetSessionId: collaboration?.sessionId }),
    );
    // JSON-safe and small: no actor refs, snapshots, machines or functions went out.
    const text = JSON.stringify(hello);
    expect(text).not.toMatch(/"(actorRef|sourceRef|snapshot|logic|machine|_parent|context)"/);
    expect(hello.events.every((e) => (e.data ?? "").length <= DATA_LIMIT)).toBe(true);
    expect(JSON.parse((await get(`${server.url}state.json`)).body)).toEqual(hello);

    await r.handleDiscordMessage({
      messageId: "1400000000000000801",
      channelId: sent.threadId,
      threadId: sent.threadId,
      authorId: BOTS.eden,
      authorIsBot: true,
      content: "확인했습니다",
      mentionUserIds: [BOTS.ruda],
      ts: Date.now(),
    });
    const id = collaboration?.sessionId ?? "";
    await waitUntil(() => late.actors.get(id)?.status === "done", "the collaboration done");
    expect(late.actors.get(id)).toMatchObject({ state: "responded", current: ["responded"] });
    expect([...late.actors.values()].find((a) => a.machineId === "mention")).toMatchObject({
      state: "responded",
      status: "done",
    });
    expect(late.messages).toContainEqual({
      kind: "event",
      event: expect.objectContaining({ type: "RESPONSE_RECEIVED", targetSessionId: id }),
    });
  });

  it(`keeps at most ${MAX_ACTORS} actors, dropping finished ones first, and the latest ${MAX_EVENTS} events`, async () => {
    server = await startInspectorServer();
    const page = subscribe(server.url);
    await waitUntil(() => page.messages.length > 0, "the hello message");
    const tiny = createMachine({
      id: "tiny",
      initial: "a",
      states: { a: { on: { GO: "b" } }, b: { type: "final" } },
    });
    const start = (id: string) => createActor(tiny, { id, inspect: server?.inspect }).start();
    for (let i = 0; i < 300; i += 1) start(`finished-${i}`).send({ type: "GO" });
    const live = Array.from({ length: 350 }, (_, i) => start(`live-${i}`));
    let state = JSON.parse((await get(`${server.url}state.json`)).body) as InspectorHello;
    expect(state.actors).toHaveLength(MAX_ACTORS);
    const ids = (s: InspectorHello) => s.actors.map((a) => a.id);
    expect(ids(state).filter((id) => id.startsWith("live-"))).toHaveLength(350);
    // The oldest finished ones went first.
    expect(ids(state).filter((id) => id.startsWith("finished-"))).toEqual(
      Array.from({ length: 150 }, (_, i) => `finished-${150 + i}`),
    );
    live.push(...Array.from({ length: 200 }, (_, i) => start(`live-${350 + i}`)));
    state = JSON.parse((await get(`${server.url}state.json`)).body) as InspectorHello;
    expect(ids(state).sort()).toEqual(Array.from({ length: 500 }, (_, i) => `live-${50 + i}`).sort());
    expect(state.events).toHaveLength(MAX_EVENTS);
    expect(state.events.at(-1)).toMatchObject({ type: "xstate.init", targetId: "live-549" });
    expect(state.machines.map((c) => c.machineId)).toEqual(["tiny"]);
    // A page that applies the stream (drops included) holds exactly what the server holds.
    await waitUntil(() => page.actors.size === MAX_ACTORS && page.actors.has(live[549]?.sessionId ?? ""));
    expect([...page.actors.keys()].sort()).toEqual(state.actors.map((a) => a.sessionId).sort());
    for (const actor of live) actor.stop();
  });

  it("never throws into the actors it inspects, whatever it is given", async () => {
    server = await startInspectorServer();
    const inspect = server.inspect;
    const junk = [
      {},
      { type: "@xstate.snapshot" },
      { type: "@xstate.snapshot", actorRef: { sessionId: 1 } },
      { type: "@xstate.event", actorRef: { sessionId: "x" }, event: null },
      { type: "@xstate.actor", actorRef: null },
    ] as unknown as InspectionEvent[];
    for (const event of junk) expect(() => inspect(event)).not.toThrow();
  });
});

describe("startInspectorServer: local only", () => {
  it("listens on 127.0.0.1, refuses other hosts, and answers only requests addressed to a loopback name", async () => {
    server = await startInspectorServer();
    const url = new URL(server.url);
    expect(url.hostname).toBe("127.0.0.1");
    await expect(startInspectorServer({ host: "0.0.0.0" })).rejects.toThrow(/loopback/);
    await expect(startInspectorServer({ host: "192.168.1.10" })).rejects.toThrow(/loopback/);
    await expect(startInspectorServer({ port: -1 })).rejects.toThrow(/port/);
    expect((await get(server.url, { host: "inspector.example.com" })).status).toBe(403);
    expect((await get(server.url, { host: `localhost:${url.port}` })).status).toBe(200);
    expect(await refusedFromNetwork(Number(url.port))).not.toBe(false);
  });

  it("serves the page, its script and Mermaid from this server, with a policy that allows nothing else", async () => {
    server = await startInspectorServer();
    const page = await get(server.url);
    expect(page.status).toBe(200);
    expect(page.body).toContain("<h1>a2a-statecharts inspector</h1>");
    expect(page.body).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(page.headers["content-security-policy"]).toMatch(/default-src 'none'; script-src 'self';/);
    // The page's settings are in it, its stylesheet and scripts served beside it (imported by app.js).
    const config = /<script type="application\/json" id="page-config">([^<]*)<\/script>/.exec(page.body);
    expect(JSON.parse(config?.[1] ?? "null")).toEqual({ maxEvents: MAX_EVENTS });
    expect(page.body).toContain('<link rel="stylesheet" href="page.css" />');
    expect(page.body).toContain('<script type="module" src="app.js"></script>');
    const css = await get(`${server.url}page.css`);
    expect(css.headers["content-type"]).toMatch(/^text\/css/);
    const app = await get(`${server.url}app.js`);
    expect(app.headers["content-type"]).toMatch(/javascript/);
    for (const [, module] of app.body.matchAll(/^import .* from "\.\/([\w.]+)";$/gm)) {
      const imported = await get(`${server.url}${module}`);
      expect(imported.status, module).toBe(200);
      expect(imported.headers["content-type"]).toMatch(/javascript/);
    }
    const mermaid = await get(`${server.url}mermaid.js`);
    expect(mermaid.status).toBe(200);
    expect(mermaid.headers["content-type"]).toMatch(/javascript/);
    expect(mermaid.body.length).toBeGreaterThan(1_000_000);
    expect(mermaid.body).toContain("mermaid");
    // A browser asks for gzip and gets the bundle as shipped: compressed, the same script once inflated.
    const gzipped = await fetch(`${server.url}mermaid.js`, { headers: { "accept-encoding": "gzip" } });
    expect(gzipped.headers.get("content-encoding")).toBe("gzip");
    expect(Number(gzipped.headers.get("content-length"))).toBeLessThan(mermaid.body.length / 2);
    expect(await gzipped.text()).toBe(mermaid.body);
    expect((await get(`${server.url}nothing-here`)).status).toBe(404);
    expect((await get(server.url, { method: "POST" })).status).toBe(405);
  });
});

function descendants(node: AnyStateNode): AnyStateNode[] {
  return (Object.values(node.states) as AnyStateNode[]).flatMap((kid) => [kid, ...descendants(kid)]);
}

describe("machineChart / activeStates: state values to drawn Mermaid ids", () => {
  it.each([
    ["replyWaitMachine", replyWaitMachine],
    ["pingPongMachine", pingPongMachine],
    ["a2aFlowMachine", a2aFlowMachine],
    ["mentionMachine", mentionMachine],
    ["collaborateMachine", collaborateMachine],
  ] as Array<[string, AnyStateMachine]>)("%s: every state has the id toMermaid declares", (_, machine) => {
    const chart = machineChart(machine);
    expect(Object.keys(chart.stateIds)).toEqual(descendants(machine.root).map((n) => n.path.join(".")));
  });

  it("nested, parallel and keyword-named states map to toMermaid's ids", () => {
    const machine = createMachine({
      id: "m",
      initial: "state",
      states: {
        state: { initial: "end", states: { end: {}, "my-x": {} } },
        p: {
          type: "parallel",
          states: { l: { initial: "a", states: { a: {} } }, r: { initial: "b", states: { b: {} } } },
        },
      },
    });
    const chart = machineChart(machine);
    expect(chart.stateIds).toEqual({
      state: "state_",
      "state.end": "state_end_",
      "state.my-x": "state_my_x",
      p: "p",
      "p.l": "p_l",
      "p.l.a": "p_l_a",
      "p.r": "p_r",
      "p.r.b": "p_r_b",
    });
    expect(activeStates({ state: "end" }, chart)).toEqual({
      label: "state.end",
      current: ["state_end_"],
      active: ["state_"],
    });
    expect(activeStates({ p: { l: "a", r: "b" } }, chart)).toEqual({
      label: "p.l.a, p.r.b",
      current: ["p_l_a", "p_r_b"],
      active: ["p", "p_l", "p_r"],
    });
    expect(activeStates("nowhere", chart)).toEqual({ label: "nowhere", current: [], active: [] });
  });

  it("a machine toMermaid cannot draw gets an error instead of a chart", () => {
    const clash = createMachine({
      id: "clash",
      initial: "a_b",
      states: { a_b: {}, a: { initial: "b", states: { b: {} } } },
    });
    expect(machineChart(clash)).toMatchObject({
      machineId: "clash",
      mermaid: null,
      error: expect.stringMatching(/Mermaid id a_b/),
    });
  });
});
