import type { A2ARuntime, MentionSummary } from "../../runtime/index.js";
import type { ScriptedGateway } from "../../testing/ScriptedGateway.js";
import type { VirtualClock } from "../../testing/VirtualClock.js";
import type { Cast } from "./cast.js";
import { type ScriptedBots, sleep } from "./ScriptedBots.js";
import type { Timeline } from "./Timeline.js";

/** What a scenario plays against: one runtime over Discord (emulated or real) and scripted agents. */
export interface DemoWorld {
  /** Demo time, running `speed` times faster than real time. */
  clock: VirtualClock;
  speed: number;
  cast: Cast;
  gateway: ScriptedGateway;
  bots: ScriptedBots;
  runtime: A2ARuntime;
  timeline: Timeline;
  responseTimeoutMs: number;
  maxAttempts: number;
}

/** One of the demo's scenarios: it plays, then says where it ended, in words compared with `expected`. */
export interface Scenario {
  /** Unique among the scenarios: its timeline tag, and the routeKey or topicId it gives the runtime. */
  key: string;
  /** What happens, in a user's words. */
  title: string;
  expected(world: DemoWorld): string;
  /** Why it cannot be played here (e.g. posting as a human needs the emulator); undefined when it can. */
  unavailable?(world: DemoWorld): string | undefined;
  /** `key` is the scenario's own, to pass to the runtime. */
  play(world: DemoWorld, key: string): Promise<string>;
}

const FINAL_MENTION = new Set<MentionSummary["status"]>(["responded", "escalated"]);

/** Polls over real time, bounded by a span of demo time (plus slack for a slow machine). */
export async function waitFor<T>(
  world: Pick<DemoWorld, "speed">,
  what: string,
  check: () => Promise<T | undefined>,
  demoLimitMs = 30 * 60_000,
): Promise<T> {
  const deadline = Date.now() + demoLimitMs / world.speed + 10_000;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen in time`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export function finalMention(world: DemoWorld, mentionId: string): Promise<MentionSummary> {
  return waitFor(world, `mention ${mentionId} to end`, async () => {
    const mention = (await world.runtime.mentions()).find((m) => m.id === mentionId);
    return mention !== undefined && FINAL_MENTION.has(mention.status) ? mention : undefined;
  });
}

export const isReminder = (content: string): boolean => content.startsWith("[리마인더 ");
const isEscalation = (content: string): boolean => content.startsWith("⚠️ 응답 없음");

async function sent(world: DemoWorld, p: Parameters<A2ARuntime["discordSend"]>[0]) {
  const result = await world.runtime.discordSend(p);
  if (result.status !== "sent") throw new Error(`discord_send was rejected: ${result.error.code}`);
  return result;
}

/** sessions_send from one agent's session to another's (`main` unless named), routed under the scenario's key. */
function ask(runtime: A2ARuntime, key: string, from: string, to: string, message: string, session = "main") {
  return runtime.sessionsSend({
    requesterSessionKey: `agent:${from}:${session}`,
    targetSessionKey: `agent:${to}:${session}`,
    message,
    routeKey: key,
    timeoutSeconds: 3_600,
  });
}

/** The scenarios that run side by side on the restarted runtime. */
export const SCENARIOS: Scenario[] = [
  {
    key: "rate-limit",
    title: "Ruda asks Eden over sessions_send; Eden is rate-limited once, then answers",
    expected: () => "ok after 1 retry (rate_limit)",
    async play({ gateway, runtime }, key) {
      gateway.script("agent:eden:main", {
        waits: [{ status: "error", error: "429 Too Many Requests: retry after 2s" }],
        reply: "액세스 토큰은 15분, 리프레시 토큰은 7일 뒤에 만료돼요.",
      });
      const r = await ask(runtime, key, "ruda", "eden", "인증 토큰 만료 시간이 몇 분이야?");
      return `${r.status} after ${r.retryAttempts} retry (${r.retryAttempts > 0 ? "rate_limit" : "none"})`;
    },
  },
  {
    key: "blocked",
    title: "Ruda asks Seum over sessions_send; Seum's context is full, so it fails at once, no retry",
    expected: () => "blocked by context_exceeded after 0 retries",
    async play({ gateway, runtime }, key) {
      gateway.script("agent:seum:main", {
        waits: [{ status: "error", error: "context_length_exceeded: the conversation is too long" }],
      });
      const r = await ask(runtime, key, "ruda", "seum", "지난 분기 장애 기록 전체를 요약해서 알려줘");
      return `${r.status} by ${r.error?.code ?? "nothing"} after ${r.retryAttempts} retries`;
    },
  },
  {
    key: "review",
    title: "Ruda and Eden review a design; their back-and-forth stops once they repeat themselves",
    expected: () => "ok, 2 turns, repetition_detected",
    async play({ gateway, runtime }, key) {
      // The two agents converge and start saying the same thing: turn 2 repeats turn 1.
      const agreed =
        "인증은 JWT 와 refresh token 조합, 세션 저장소는 Redis, 만료는 토큰 수명에 맞추는 걸로 정리하죠.";
      gateway.script(
        "agent:eden:design",
        "인증 모듈은 JWT 와 refresh token 조합이 좋겠습니다. 세션 저장소는 어떻게 할까요?",
        agreed,
        agreed,
      );
      gateway.script("agent:ruda:design", agreed, agreed, agreed);
      const r = await ask(runtime, key, "ruda", "eden", "이 아키텍처 설계 같이 검토하자", "design");
      return `${r.status}, ${r.actualTurns} turns, ${r.terminationReason ?? "no reason"}`;
    },
  },
  {
    key: "notice",
    title: "Ruda tells Seum a release is out: a notification, no back-and-forth, no announcement",
    expected: () => "ok, 0 turns, skipped, not announced",
    async play({ gateway, runtime }, key) {
      gateway.script("agent:seum:ops", "확인했습니다.");
      const r = await ask(runtime, key, "ruda", "seum", "[NOTIFICATION] v2.3 배포 완료했습니다", "ops");
      return `${r.status}, ${r.actualTurns} turns, ${r.terminationReason ?? "no reason"}, ${r.announced ? "announced" : "not announced"}`;
    },
  },
  {
    key: "answered",
    title: "Ruda asks Eden in a Discord thread (discord_send); Eden answers there",
    expected: () => "responded, 0 reminders",
    async play(world, key) {
      world.bots.when({
        agentId: "eden",
        matches: (m) => m.content.includes("API 스펙 리뷰"),
        reply: "리뷰했어요. 인증 헤더 이름만 X-Agent-Token 으로 통일하면 됩니다.",
        afterMs: world.responseTimeoutMs * 0.15,
      });
      const r = await sent(world, {
        fromAgentId: "ruda",
        targetAgentId: "eden",
        message: "API 스펙 리뷰 부탁해. 특히 인증 헤더 부분.",
        threadName: "API 스펙 리뷰",
        topicId: key,
      });
      const mention = await finalMention(world, r.mentionId);
      const reminders = (await world.cast.messagesIn(r.threadId)).filter((m) => isReminder(m.content));
      return `${mention.status}, ${reminders.length} reminders`;
    },
  },
  {
    key: "unanswered",
    title: "Ruda asks Seum in a Discord thread; Seum never answers: two reminders, then a human is pinged",
    expected: ({ cast }) =>
      `escalated after 2 reminders, the escalation pinged ${cast.humanId === undefined ? "nobody" : "only the human"}`,
    async play(world, key) {
      const r = await sent(world, {
        fromAgentId: "ruda",
        targetAgentId: "seum",
        message: "이번 주 성능 리포트 확인 부탁해",
        threadName: "성능 리포트",
        topicId: key,
      });
      const mention = await finalMention(world, r.mentionId);
      const messages = await world.cast.messagesIn(r.threadId);
      const reminders = messages.filter((m) => isReminder(m.content)).length;
      const escalation = messages.find((m) => isEscalation(m.content));
      const pinged = escalation?.mentionIds ?? [];
      const who =
        pinged.length === 0
          ? "nobody"
          : pinged.length === 1 && pinged[0] === world.cast.humanId
            ? "only the human"
            : pinged.join(", ");
      return `${mention.status} after ${reminders} reminders, the escalation pinged ${who}`;
    },
  },
  {
    key: "human",
    title: "A person joins Ruda and Eden's thread and asks Eden; Eden answers in that thread",
    expected: () => "handled by eden in the thread's session, mention responded",
    unavailable: ({ cast }) =>
      cast.postAsHuman === undefined ? "posting as the human needs the emulator" : undefined,
    async play(world, key) {
      const { cast, bots, clock } = world;
      const humanId = cast.humanId;
      world.bots.when({
        agentId: "eden",
        matches: (m) => m.authorId === humanId,
        reply: "네, 금요일 배포로 하겠습니다.",
        afterMs: world.responseTimeoutMs * 0.07,
      });
      const r = await sent(world, {
        fromAgentId: "ruda",
        targetAgentId: "eden",
        message: "배포 일정 같이 정하자. 목요일이 괜찮을까?",
        threadName: "배포 일정",
        topicId: key,
      });
      await sleep(clock, world.responseTimeoutMs * 0.4);
      await cast.postAsHuman?.(r.threadId, `<@${cast.botIds.eden}> 목요일은 QA 가 있으니 금요일 배포로 가죠`);
      const human = await waitFor(world, "the human's message to be handled", async () =>
        bots.decisions.find((d) => d.message.authorId === humanId && d.message.channelId === r.threadId),
      );
      const mention = await finalMention(world, r.mentionId);
      const d = human.decision;
      const where =
        d.action === "handle" && d.sessionKey.endsWith(`:${r.threadId}`)
          ? "the thread's session"
          : "elsewhere";
      return `${d.action === "handle" ? `handled by ${d.agentId}` : d.action} in ${where}, mention ${mention.status}`;
    },
  },
];
