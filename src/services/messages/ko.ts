import type { MessageCatalog } from "./messageKeys.js";

/**
 * Korean, the default. The agent prompts stay in English, as the models are prompted in English
 * whatever the team's language; the skip tokens must stay exactly as they are in any language.
 */
export const ko: MessageCatalog = {
  reminder:
    '[리마인더 {attempts}/{maxAttempts}] {target} 위 요청에 대해 확인 부탁해요.\n원본: "{original}" ({minutes}분 전)',
  escalation:
    '⚠️ 응답 없음 ({attempts}회 시도, {minutes}분 경과)\n대상: {target}\n요청: "{original}"\n{ping}확인 필요',
  failureNotice:
    '⚠️ 협업 전송 실패: {from} → {to} ({code})\n{location}\n사유: {reason}\n요청: "{original}"\n{ping}{check}',
  failureNoticeLocation: "위치: {channel}",
  failureCheckPermission: "채널 권한 확인 필요",
  failureCheckNotFound: "봇/채널 존재 확인 필요",
  collaborationThreadName: "[협업] {from} → {to} · {topic}",
  collaborationThreadNameNoTopic: "[협업] {from} → {to}",
  threadStarter: "🧵 {threadName}",
  reportThreadName: "[리포트] {eventType} · {time}",
  noReplyOutcome: "[outcome] blocked: 응답을 받지 못했습니다",
  noReplyOutcomeWithReason: "[outcome] blocked: 응답을 받지 못했습니다 ({reason})",
  noReplyNotFound: "실행 상태를 찾을 수 없음",
  noReplyRunError: "실행 오류",
  noReplyWaitExceeded: "대기 시간 {seconds}초 초과",
  errorGatewayConnection: "Gateway 연결 실패: {reason}",
  errorSessionNotFound: "실행 상태를 찾을 수 없음",
  errorRateLimit: "LLM API rate limit",
  errorContextExceeded: "LLM 컨텍스트 윈도우 초과",
  errorServerOverload: "LLM 서버 과부하",
  errorUnknown: "알 수 없는 실행 오류",
  errorWaitTimeout: "응답 대기 시간 초과",
  discordSendSent: "메시지 전송 완료. 스레드 ID: {threadId}",
  discordSendRejected: "discord_send: {code}: {reason}",
  replyContext: [
    "## Agent-to-agent reply step",
    "",
    "**Your role**: {role}",
    "**Turn**: Turn {turn} of {maxTurns}",
    "**Conversation purpose**: {intent}",
    "Agent 1 (requester) session: {requesterSessionKey}",
    "Agent 2 (target) session: {targetSessionKey}",
    "",
    "### Original request",
    "{original}",
    "{previous}",
    "",
    "### Guidelines",
    "- Be concise and focused on the topic",
    "- If you have nothing substantive to add, reply exactly: {skipToken}",
    "- Do NOT repeat what has already been said",
    "- This conversation will end after at most {remaining} more turns",
    "",
    'To end the conversation, reply exactly "{skipToken}".',
  ].join("\n"),
  replyContextPrevious: "\n### Previous discussion\n{summary}",
  replyRoleRequester: "Agent 1 (requester)",
  replyRoleTarget: "Agent 2 (target)",
  announceContext: [
    "Agent-to-agent announce step:",
    "Original request: {original}",
    "Round 1 reply: {roundOneReply}",
    "Latest reply: {latestReply}",
    'If you want to remain silent, reply exactly "{skipToken}".',
    "Any other reply will be posted to the target channel.",
  ].join("\n"),
  announceStepMessage: "Agent-to-agent announce step.",
  announceNone: "(none)",
};
