import {
  type A2AEvent,
  calculateBackoffMs,
  canRetry,
  classifyA2AError,
  classifyMessageIntent,
  decideAnnounce,
  EventBus,
  LoopGuard,
  parseConfig,
  resolveEffectivePingPongTurns,
  shouldTerminatePingPong,
} from "../services/index.js";

/**
 * The designs' scenarios played through the policy layer in simulated time: what each decision is
 * and why. The statecharts (and the full demo over a Discord emulator) build on these decisions.
 */
export interface ScenarioResult {
  name: string;
  expected: string;
  actual: string;
}

export function runPolicyDemo(print: (line: string) => void): ScenarioResult[] {
  const config = parseConfig();
  const a2a = config.session.agentToAgent;
  let clock = 0;
  const bus = new EventBus();
  bus.subscribe("*", (e) => print(`  ${stamp(e.ts)}  ${e.type.padEnd(22)} ${summarize(e)}`));
  const results: ScenarioResult[] = [];
  const scenario = (name: string, expected: string, play: () => string) => {
    print(`\n▶ ${name}`);
    const actual = play();
    results.push({ name, expected, actual });
    print(
      `  ${actual === expected ? "✔" : "✘"} ${actual}${actual === expected ? "" : ` (expected ${expected})`}`,
    );
  };

  scenario("rate limit, retried, then answered (design 000 §7.1)", "replied after 1 retry", () => {
    const waits = [{ status: "error", error: "429 Too Many Requests: retry after 2s" }, { status: "ok" }];
    let attempt = 0;
    for (const wait of waits) {
      clock += 1_000;
      if (wait.status === "ok") break;
      const info = classifyA2AError({ waitStatus: wait.status, waitError: wait.error, attempt });
      if (!canRetry(info, a2a.retry.enabled)) return `blocked by ${info.code}`;
      const backoffMs = calculateBackoffMs(attempt, info, { random: () => 0.5 });
      bus.emit(retryEvent(clock, info, attempt + 1, backoffMs));
      clock += backoffMs;
      attempt += 1;
    }
    return `replied after ${attempt} retry`;
  });

  scenario("context window exceeded: permanent, no retry", "blocked by context_exceeded", () => {
    const info = classifyA2AError({ waitStatus: "error", waitError: "context_length_exceeded", attempt: 0 });
    return canRetry(info, a2a.retry.enabled) ? "retried" : `blocked by ${info.code}`;
  });

  scenario(
    "design review ping-pong ends early by repetition (design 001 §4.2)",
    "2 of 5 turns, repetition_detected",
    () => {
      const message = "이 아키텍처 설계 같이 검토하자";
      const intent = classifyMessageIntent(message);
      const turns = resolveEffectivePingPongTurns({
        configMaxTurns: a2a.maxPingPongTurns,
        classifiedIntent: intent,
        explicitSkipPingPong: false,
      });
      const replies = [
        "인증 모듈은 JWT 와 refresh token 조합으로 가는 게 좋겠습니다. 세션 저장소는 어떻게 할까요?",
        "인증 모듈은 JWT 와 refresh token 조합으로 가는 게 좋겠습니다. 세션 저장소는 어떻게 할까요?",
      ];
      const previous: string[] = [];
      for (let turn = 1; turn <= turns; turn += 1) {
        const replyText = replies[turn - 1] ?? "";
        const decision = shouldTerminatePingPong({
          replyText,
          turn,
          maxTurns: turns,
          previousReplies: previous,
        });
        if (decision.terminate) return `${turn} of ${turns} turns, ${decision.reason}`;
        previous.push(replyText);
      }
      return `${turns} of ${turns} turns, max_turns`;
    },
  );

  scenario("a notification skips ping-pong and announce", "0 turns, announce skipped (no_target)", () => {
    const intent = classifyMessageIntent("[NOTIFICATION] 배포 완료했습니다");
    const turns = resolveEffectivePingPongTurns({
      configMaxTurns: a2a.maxPingPongTurns,
      classifiedIntent: intent,
      explicitSkipPingPong: false,
    });
    const announce = decideAnnounce({
      announceTarget: null,
      targetSessionKey: "agent:eden:a2a:1",
      latestReply: "확인",
    });
    return `${turns} turns, announce ${announce.run ? "run" : `skipped (${announce.reason})`}`;
  });

  scenario("runaway collaboration stopped by the loop guard (design 002 §6)", "11th call rejected", () => {
    const guard = new LoopGuard({ ...config.discord.collaboration.loopGuard, now: () => clock });
    for (let call = 1; call <= 11; call += 1) {
      clock += 1_000;
      const decision = guard.checkCollaboration(call % 2 ? "ruda" : "eden", call % 2 ? "eden" : "ruda");
      if (!decision.allowed) return `${ordinal(call)} call rejected`;
      if (decision.warning) print(`  ${stamp(clock)}  warning                ${decision.warning}`);
    }
    return "never rejected";
  });

  return results;
}

function retryEvent(
  ts: number,
  info: ReturnType<typeof classifyA2AError>,
  attempt: number,
  backoffMs: number,
): A2AEvent {
  return {
    type: "a2a.retry",
    ts,
    conversationId: "conv-demo-1",
    fromAgent: "ruda",
    toAgent: "eden",
    data: {
      errorCode: info.code,
      errorCategory: info.category,
      errorMessage: info.message,
      attempt,
      maxAttempts: info.maxAttempts,
      backoffMs,
      conversationId: "conv-demo-1",
      fromAgent: "ruda",
      toAgent: "eden",
    },
  };
}

function summarize(e: A2AEvent): string {
  return e.type === "a2a.retry"
    ? `${e.data.errorCode} retry ${e.data.attempt}/${e.data.maxAttempts - 1}, backoff ${e.data.backoffMs} ms`
    : JSON.stringify(e.data);
}

function stamp(ms: number): string {
  const s = Math.floor(ms / 1000);
  return `+${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}.${String(ms % 1000).padStart(3, "0")}`;
}

function ordinal(n: number): string {
  return n === 1 ? "1st" : n === 2 ? "2nd" : n === 3 ? "3rd" : `${n}th`;
}
