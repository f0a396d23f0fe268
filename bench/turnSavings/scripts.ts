// The scripted conversations of the turn-savings benchmark (target: ≥ 50% fewer LLM calls).
// Each script is one `sessions_send`: the requester's message, the target's first reply, then the
// ping-pong replies by turn (turn 1 is the requester answering that first reply, then they alternate,
// as in the old loop), and what the target's announce step would say. The same replies are used
// with and without the optimisation: the old flow reads as many of them as its loop asks for (up to
// 5), the optimised flow stops where the intent and termination rules stop it.
import type { PingPongTerminationReason } from "../../src/machines/index.js";
import { A2AMessageIntent, REPLY_SKIP_TOKEN } from "../../src/policies/index.js";

/** Where the announce step would post: a Discord channel, an internal channel, or nowhere. */
export type AnnounceKind = "discord" | "internal" | "none";

export interface Script {
  id: string;
  /** The intent the message must classify as (the benchmark fails if it does not). */
  intent: A2AMessageIntent;
  /** One line on what kind of conversation this is. */
  shape: string;
  from: string;
  to: string;
  message: string;
  /** The target's reply to the message (the initial request's LLM run). */
  primary: string;
  /** Ping-pong replies: index 0 is turn 1 (the requester), index 1 turn 2 (the target), … */
  turns: string[];
  announce: AnnounceKind;
  /** What the announce step answers; ANNOUNCE_SKIP when absent. */
  announceReply?: string;
  /** How the optimised ping-pong should end, checked against the machine: a script-writing guard. */
  expect: { reason: PingPongTerminationReason; turns: number };
}

const SKIP = REPLY_SKIP_TOKEN;
const { COLLABORATION, QUESTION, RESULT_REPORT, NOTIFICATION, ESCALATION } = A2AMessageIntent;

// Collaboration: reviews, design discussions, brainstorming. The optimised flow allows the configured
// 5 turns and relies on early termination; the old flow runs 5 unless an agent answers REPLY_SKIP.
const collaboration: Script[] = [
  {
    id: "collab-architecture-review",
    intent: COLLABORATION,
    shape: "architecture review that converges and starts repeating",
    from: "ruda",
    to: "eden",
    message: "이 아키텍처 설계 같이 검토하자. 이벤트 버스와 저장소 계층을 분리하는 안이야.",
    primary:
      "설계 문서를 읽었습니다. 이벤트 버스와 저장소 계층을 분리하는 방향은 좋습니다. 다만 저장소 쓰기 경로가 동기식이라 부하가 몰리면 지연이 커질 것 같습니다.",
    turns: [
      "쓰기 경로는 append-only 로그로 바꾸고 스냅샷은 주기적으로 압축하는 안을 생각하고 있어. 재시작할 때 로그 재생 비용이 걱정이긴 해.",
      "재생 비용은 체크포인트로 줄일 수 있습니다. 체크포인트 간격을 설정으로 빼고 기본값을 천 건으로 두면 재시작이 1초 안쪽일 겁니다.",
      "좋아. 정리하면 쓰기는 append-only 로그, 체크포인트는 천 건마다, 스냅샷 압축은 야간 배치로 하자.",
      "정리하면 쓰기는 append-only 로그, 체크포인트는 천 건마다, 스냅샷 압축은 야간 배치로 하자.",
      "그래, 그렇게 진행하자. 설계 문서에는 내가 오늘 중으로 반영해 둘게.",
    ],
    announce: "discord",
    announceReply:
      "ruda와 eden이 저장소 쓰기 경로를 append-only 로그와 천 건 체크포인트로 바꾸기로 했습니다.",
    expect: { reason: "repetition_detected", turns: 4 },
  },
  {
    id: "collab-retry-policy",
    intent: COLLABORATION,
    shape: "policy debate that stays substantive for all five turns",
    from: "eden",
    to: "seum",
    message:
      "결제 서비스 재시도 정책을 함께 논의하고 싶어. 지금은 모든 5xx를 세 번 재시도하는데 멱등성 키가 없는 엔드포인트가 있어.",
    primary:
      "멱등성 키가 없는 엔드포인트는 재시도하면 이중 결제가 날 수 있습니다. 우선 POST /charges 와 /refunds 두 곳에 키를 필수로 받게 바꾸는 게 먼저입니다.",
    turns: [
      "키를 필수로 바꾸면 구버전 클라이언트가 깨져. 헤더가 없으면 서버가 요청 본문 해시로 키를 만들어 주는 과도기 방식은 어때.",
      "본문 해시는 타임스탬프 필드 때문에 매번 달라집니다. 해시에서 제외할 필드 목록을 두면 가능하지만 목록 관리가 또 다른 부채가 됩니다.",
      "그럼 과도기에는 재시도를 GET 과 멱등성 키가 있는 요청으로만 제한하고, 나머지는 실패를 그대로 돌려주자. 클라이언트 업데이트는 두 달 공지하고.",
      "찬성합니다. 다만 503 중에서 Retry-After 가 붙은 응답은 게이트웨이가 아직 요청을 처리하지 않았다는 뜻이니 POST 라도 재시도해도 안전합니다.",
      "좋은 지적이야. Retry-After 가 있는 503 은 예외로 두고, 대시보드에 엔드포인트별 재시도 횟수를 추가해서 두 달 동안 지켜보자.",
    ],
    announce: "none",
    expect: { reason: "max_turns", turns: 5 },
  },
  {
    id: "collab-pr-review",
    intent: COLLABORATION,
    shape: "code review that ends with an acknowledgement",
    from: "seum",
    to: "eden",
    message: "PR #482 리뷰 부탁해. 세션 키 파서를 정규식에서 토크나이저로 바꿨어.",
    primary:
      "토크나이저 쪽이 훨씬 읽기 쉽네요. 콜론이 연속으로 오는 키와 빈 세그먼트 처리가 빠져 있어서 그 경계값 테스트가 필요합니다.",
    turns: [
      "빈 세그먼트는 의도적으로 거부하고 있어. 에러 메시지에 위치를 넣어 두었고, 연속 콜론은 빈 세그먼트로 보고 같은 에러를 내.",
      "알겠습니다. 그렇다면 그 두 경우를 경계값 테스트로만 추가해 주시면 승인하겠습니다.",
      "경계값 테스트 세 개 추가해서 푸시했어. CI 통과하면 머지할게.",
      SKIP,
    ],
    announce: "none",
    expect: { reason: "conclusion_detected", turns: 2 },
  },
  {
    id: "collab-onboarding-doc",
    intent: COLLABORATION,
    shape: "doc feedback the target itself ends with REPLY_SKIP (both flows stop)",
    from: "ieum",
    to: "eden",
    message: "온보딩 문서 초안에 피드백 줘. 특히 로컬 개발 환경 설정 부분이 길어.",
    primary:
      "로컬 환경 설정을 스크립트 하나로 줄이면 문서가 절반으로 줄어듭니다. Node 버전 고정과 .env 예시 파일도 같이 넣는 걸 추천합니다.",
    turns: [
      "스크립트는 좋아. 다만 윈도우 사용자가 있어서 셸 스크립트만으로는 부족해. npm 스크립트로 감싸는 건 괜찮을까 싶어.",
      "npm 스크립트로 감싸면 윈도우에서도 돌아갑니다. 셸 고유 문법만 피하면 되니 node 스크립트로 작성하는 편이 안전합니다.",
      SKIP,
    ],
    announce: "internal",
    expect: { reason: "explicit_skip", turns: 3 },
  },
  {
    id: "collab-log-format",
    intent: COLLABORATION,
    shape: "opinion request settled by a short agreement",
    from: "ruda",
    to: "seum",
    message: "로그 포맷 변경안 의견 줘. 모든 서비스를 JSON 한 줄 로그로 통일하려고 해.",
    primary:
      "JSON 한 줄 로그로 통일하면 수집기 파서를 하나로 줄일 수 있어 좋습니다. 필드 이름은 OpenTelemetry 규약을 따르는 걸 제안합니다.",
    turns: [
      "OpenTelemetry 규약으로 가자. 기존 대시보드 쿼리는 내가 한 번에 옮길게. 전환 기간에는 두 포맷을 같이 찍는 걸로 하고.",
      "좋습니다, 그렇게 하죠.",
      "그럼 이번 스프린트에 공통 로거 패키지부터 만들고 서비스별로 차례로 바꾸자.",
      "네, 공통 로거 패키지는 제가 초안을 올리겠습니다. 필드 목록은 위키에 정리해 둘게요.",
      "고마워. 초안 올라오면 리뷰할게.",
    ],
    announce: "none",
    expect: { reason: "minimal_content", turns: 2 },
  },
  {
    id: "collab-dashboard-names",
    intent: COLLABORATION,
    shape: "English brainstorm that settles on a name",
    from: "eden",
    to: "ieum",
    message: "Let's brainstorm names for the new metrics dashboard. It covers queue depth and retry rates.",
    primary:
      "A few ideas: Pulse, Backpressure, Tidewatch. Pulse is short and reads well in the sidebar; Tidewatch fits the queue-depth theme.",
    turns: [
      "Pulse is taken by the uptime page already. Tidewatch is nice but long. What about Undertow, since it is about what drags the queues down?",
      "Undertow works and nothing else uses it. I would still put the two panels, queue depth and retry rate, side by side on its front page.",
      "Sounds good, let's go with Undertow and put both panels on the front page.",
      SKIP,
    ],
    announce: "discord",
    announceReply:
      "The new metrics dashboard will be called Undertow, with queue depth and retry rate on its front page.",
    expect: { reason: "conclusion_detected", turns: 3 },
  },
  {
    id: "collab-cache-invalidation",
    intent: COLLABORATION,
    shape: "review cut off by a polite opening that still carries a new point (a false positive)",
    from: "seum",
    to: "eden",
    message: "캐시 무효화 전략 같이 검토해 보자. TTL만으로는 설정 변경이 늦게 반영돼.",
    primary:
      "TTL을 짧게 줄이면 원본 부하가 늘어서 한계가 있습니다. 설정 저장소에 버전 번호를 두고 읽을 때 버전을 비교하는 방식을 제안합니다.",
    turns: [
      "버전 비교는 읽기마다 원본을 한 번 찔러야 하잖아. 읽기 경로에 네트워크 왕복이 하나 더 생기는 건 피하고 싶어.",
      "감사합니다. 그런데 한 가지 더 짚자면, 설정 변경 이벤트를 버스로 흘려서 즉시 무효화하는 경로도 필요합니다. 이건 제가 초안을 쓰겠습니다.",
      "이벤트 경로가 있으면 버전 비교는 안전망으로만 두고 주기를 길게 가져가면 되겠다. 초안 기다릴게.",
      "초안에 이벤트 유실 시 재동기화 절차도 넣겠습니다. 버전 비교 주기는 5분으로 시작하죠.",
      "좋아, 5분으로 시작해서 지표 보고 조정하자.",
    ],
    announce: "none",
    expect: { reason: "conclusion_detected", turns: 2 },
  },
  {
    id: "collab-oncall-rotation",
    intent: COLLABORATION,
    shape: "review that goes the full five turns",
    from: "ruda",
    to: "ieum",
    message: "신규 온콜 로테이션 초안 리뷰해줘. 주말 근무가 한 사람에게 몰리는 문제가 있어.",
    primary:
      "초안을 보니 주말이 고정 배정이라 몰리는 겁니다. 주말만 별도 순번으로 돌리고 평일과 분리하면 넉 달에 한 번꼴로 고르게 돌아갑니다.",
    turns: [
      "주말 순번을 분리하면 같은 주에 평일과 주말이 겹치는 사람이 생겨. 겹치면 다음 평일 순번을 한 칸 미루는 규칙을 넣을까 해.",
      "한 칸 미루는 규칙은 좋습니다. 다만 미뤄진 사람이 연속으로 밀리지 않도록 최대 한 번만 미루게 상한을 두는 게 필요합니다.",
      "상한 좋아. 그리고 휴가 기간은 순번에서 빼되, 돌아온 주에는 주말을 배정하지 않는 예외도 넣으려고 해.",
      "휴가 예외는 좋은데 달력 연동이 없으면 수동으로 빠뜨리기 쉽습니다. 휴가 캘린더에서 자동으로 제외하는 스크립트를 제가 맡겠습니다.",
      "스크립트 맡아 줘서 고마워. 다음 주 팀 회의에서 이 규칙 세 가지로 확정하자.",
    ],
    announce: "discord",
    announceReply:
      "온콜 로테이션 개정안: 주말 순번 분리, 겹치면 한 칸 미루기(최대 한 번), 휴가 캘린더 자동 제외. 다음 주 확정 예정.",
    expect: { reason: "max_turns", turns: 5 },
  },
  {
    id: "collab-api-versioning",
    intent: COLLABORATION,
    shape: "discussion where the target echoes the requester's proposal",
    from: "eden",
    to: "seum",
    message: "API 버저닝 정책 함께 논의하자. URL 경로 방식과 헤더 방식 중에 하나를 골라야 해.",
    primary:
      "두 방식 모두 써 봤는데 운영 관점에서는 차이가 큽니다. 헤더 방식은 URL이 깔끔하지만 캐시와 로그에서 버전이 안 보여서 장애 분석이 어렵습니다.",
    turns: [
      "그래서 나는 URL 경로 방식이 낫다고 봐. 캐시와 로그에서 버전이 바로 보이고 클라이언트 구현도 단순해.",
      "URL 경로 방식이 낫다고 봐. 캐시와 로그에서 버전이 바로 보이고 클라이언트 구현도 단순해.",
      SKIP,
    ],
    announce: "none",
    expect: { reason: "repetition_detected", turns: 2 },
  },
  {
    id: "collab-migration-review",
    intent: COLLABORATION,
    shape: "English review that ends with an acknowledgement",
    from: "seum",
    to: "eden",
    message:
      "Please review the migration plan for the orders table; the backfill runs in batches of 10k rows.",
    primary:
      "Batches of 10k are fine for the primary, but the replicas lag by minutes at that rate. I would throttle on replica lag instead of a fixed batch size.",
    turns: [
      "Throttling on lag makes the run time unpredictable. Could we cap it: 10k rows per batch, pause whenever lag exceeds 30 seconds?",
      "That cap works. Add a dry run on the staging copy first so we know the total time, and keep the old column until the backfill is verified.",
      "Dry run on staging is scheduled for tonight, and the old column stays until a row-count check passes on both sides.",
      "Got it, I'll sign off once the staging dry run finishes and the row counts match.",
      "Thanks, I'll post the dry-run numbers in the thread tomorrow morning.",
    ],
    announce: "discord",
    announceReply:
      "Orders migration: 10k-row batches paused on replica lag over 30 s, staging dry run tonight, old column kept until counts match.",
    expect: { reason: "conclusion_detected", turns: 4 },
  },
  {
    id: "collab-test-strategy",
    intent: COLLABORATION,
    shape: "doc feedback the requester ends with REPLY_SKIP after one exchange",
    from: "ieum",
    to: "seum",
    message: "테스트 전략 문서 피드백 부탁해. 계약 테스트를 어디까지 넣을지 고민이야.",
    primary:
      "외부 팀이 소비하는 API 세 개만 계약 테스트로 묶고 내부 호출은 통합 테스트로 두는 게 유지 비용 대비 효과가 좋습니다.",
    turns: ["세 개로 한정하는 건 동의해. 나머지는 통합 테스트로 두고 문서에 기준을 적어 둘게.", SKIP],
    announce: "none",
    expect: { reason: "explicit_skip", turns: 2 },
  },
  {
    id: "collab-monorepo",
    intent: COLLABORATION,
    shape: "disagreement that stays open after five turns",
    from: "ruda",
    to: "eden",
    message: "모노레포 전환 여부에 대한 의견 줘. 빌드 시간이 가장 걱정이야.",
    primary:
      "빌드 시간은 변경된 패키지만 빌드하는 도구를 쓰면 오히려 줄어듭니다. 걱정은 권한 관리 쪽입니다. 팀별 저장소 권한을 코드 소유자 파일로 옮겨야 합니다.",
    turns: [
      "코드 소유자 파일로는 읽기 권한을 나눌 수 없어. 보안팀 코드는 다른 팀이 읽으면 안 되는데 그건 모노레포에서 해결이 안 돼.",
      "그렇다면 보안팀 코드만 별도 저장소로 두고 나머지를 합치는 절충안이 있습니다. 의존 방향이 보안팀 쪽으로만 향하면 문제없습니다.",
      "절충안은 결국 저장소 두 개를 계속 관리하는 거라 전환 효과가 반으로 줄어. 전환 비용 대비 이득이 있는지 숫자로 보고 싶어.",
      "지난 분기 기준으로 저장소 간 동시 변경 PR이 41건이었습니다. 모노레포였다면 원자적 커밋 하나로 끝났을 작업들이라 그 비용을 추정해 보겠습니다.",
      "41건이면 생각보다 많네. 추정치 나오면 보안팀과 같이 다시 이야기하자. 결정은 그 다음으로 미루자.",
    ],
    announce: "discord",
    announceReply:
      "모노레포 전환은 보류: eden이 저장소 간 동시 변경 41건의 비용을 추정한 뒤 보안팀과 다시 논의합니다.",
    expect: { reason: "max_turns", turns: 5 },
  },
  {
    id: "collab-release-checklist",
    intent: COLLABORATION,
    shape: "checklist review that ends with a completion report",
    from: "eden",
    to: "ruda",
    message: "릴리스 체크리스트 같이 검토하자. 이번 주 금요일 배포야.",
    primary:
      "체크리스트에 롤백 리허설이 빠져 있습니다. 마이그레이션이 포함된 배포라 롤백 스크립트를 스테이징에서 한 번 돌려 봐야 합니다.",
    turns: [
      "맞아, 롤백 리허설 넣자. 스테이징 DB 스냅샷을 목요일 오후에 떠 두고 그걸로 돌려 볼게.",
      "스냅샷 뜰 때 쓰기 트래픽을 잠깐 막아야 일관성이 맞습니다. 공지는 제가 수요일에 내겠습니다.",
      "공지 고마워. 목요일에 리허설 끝나면 체크리스트에 결과 적어 둘게.",
      "완료했습니다. 체크리스트에 롤백 리허설 항목과 쓰기 차단 공지 일정을 넣어 두었어요.",
      "좋아, 금요일 배포 준비는 이걸로 됐다.",
    ],
    announce: "discord",
    announceReply:
      "금요일 배포 체크리스트에 롤백 리허설(목요일, 스테이징)과 수요일 쓰기 차단 공지가 추가되었습니다.",
    expect: { reason: "conclusion_detected", turns: 4 },
  },
  {
    id: "collab-error-copy",
    intent: COLLABORATION,
    shape: "copy review that ends with a short reply",
    from: "ieum",
    to: "ruda",
    message: "에러 메시지 문구 리뷰 좀 해줘. 사용자에게 보이는 문구라 톤이 중요해.",
    primary:
      "대부분 괜찮은데 '요청이 거부되었습니다'는 사용자 탓처럼 읽힙니다. '지금은 처리할 수 없어요. 잠시 후 다시 시도해 주세요'가 부드럽습니다.",
    turns: [
      "좋은 제안이야. 결제 실패 문구도 같은 톤으로 바꾸고, 카드사 코드는 괄호 안에 작게 남기려고 해.",
      "카드사 코드는 고객센터 문의 때 필요하니 남기는 게 맞습니다. 다만 '오류 코드'라는 말을 앞에 붙여 주세요.",
      "네, 반영했어요.",
      SKIP,
    ],
    announce: "none",
    expect: { reason: "minimal_content", turns: 3 },
  },
];

// Questions: answered in the first reply; the optimised flow allows 1 turn (the requester's answer).
const question: Script[] = [
  {
    id: "question-auth-module",
    intent: QUESTION,
    shape: "where-is question (design 001 §2.1's example), thanks",
    from: "ruda",
    to: "seum",
    message: "인증 모듈 코드 어디에 있어?",
    primary: "src/auth/module.ts 에 있습니다. 토큰 검증은 같은 폴더의 verify.ts 가 맡고 있어요.",
    turns: ["감사합니다. 확인했습니다.", "천만에요. 더 필요한 것이 있으면 언제든 말씀해 주세요.", SKIP],
    announce: "none",
    expect: { reason: "minimal_content", turns: 1 },
  },
  {
    id: "question-cache-key",
    intent: QUESTION,
    shape: "how-question with a follow-up the old flow answers",
    from: "ieum",
    to: "eden",
    message: "배포 파이프라인에서 캐시 키는 어떻게 정해져?",
    primary:
      "lockfile 해시와 Node 버전을 합쳐서 만듭니다. 둘 중 하나라도 바뀌면 새 캐시가 만들어지고, 오래된 캐시는 7일 뒤에 지워집니다.",
    turns: [
      "그럼 lockfile이 안 바뀌면 캐시가 계속 재사용되는 거야? 빌드 도구 버전이 올라가도?",
      "네, 빌드 도구가 lockfile에 고정되어 있으니 버전이 오르면 lockfile도 바뀝니다. 전역 설치 도구만 예외인데 지금은 없습니다.",
      "알겠어, 고마워.",
      SKIP,
    ],
    announce: "none",
    expect: { reason: "max_turns", turns: 1 },
  },
  {
    id: "question-rate-limiter",
    intent: QUESTION,
    shape: "English where-question, then pleasantries until turn 5",
    from: "eden",
    to: "seum",
    message: "Where is the rate limiter configured?",
    primary:
      "In config/limits.yaml; the gateway reads it at start-up. Per-route overrides live in the same file under `routes:`.",
    turns: [
      "Thanks, found it. I'll add the override for the export route there.",
      "Sounds good. Remember the gateway only reloads it on restart, so schedule the change with the next deploy.",
      "Noted, I'll put it in Friday's deploy.",
      "Great, let me know if anything about the limits looks off after the deploy.",
      "Will do, thanks again.",
    ],
    announce: "none",
    expect: { reason: "conclusion_detected", turns: 1 },
  },
  {
    id: "question-staging-db",
    intent: QUESTION,
    shape: "request with no question words (the classifier's default: a question)",
    from: "seum",
    to: "ieum",
    message: "스테이징 DB 접속 정보 공유 부탁해.",
    primary:
      "접속 정보는 비밀 저장소의 staging/db 경로에 있어요. 읽기 권한을 방금 추가했으니 바로 보일 겁니다.",
    turns: [
      "고마워, 이제 보여. 읽기 전용 계정 맞지?",
      "네, 읽기 전용입니다. 쓰기가 필요하면 요청서를 올려 주세요.",
      "알겠어. 지금은 읽기만 있으면 돼.",
      SKIP,
    ],
    announce: "none",
    expect: { reason: "max_turns", turns: 1 },
  },
  {
    id: "question-deploy-schedule",
    intent: QUESTION,
    shape: "tell-me request, answered once",
    from: "ruda",
    to: "eden",
    message: "오늘 배포 일정 알려줘.",
    primary:
      "오늘은 16시에 결제 서비스 v2.14, 17시에 알림 서비스 v1.9가 나갑니다. 둘 다 마이그레이션은 없습니다.",
    turns: [
      "감사합니다. 17시 배포 끝나면 채널에 한 줄 남겨 주세요.",
      "네, 배포가 끝나면 채널에 남기겠습니다.",
      "좋아요, 수고해요.",
      "감사합니다. 혹시 배포 중에 이상이 있으면 바로 공유드리겠습니다.",
      SKIP,
    ],
    announce: "discord",
    announceReply: "오늘 배포: 16시 결제 서비스 v2.14, 17시 알림 서비스 v1.9 (마이그레이션 없음).",
    expect: { reason: "conclusion_detected", turns: 1 },
  },
  {
    id: "question-error-log",
    intent: QUESTION,
    shape: "check-this request with a stack trace, follow-up cut at one turn",
    from: "seum",
    to: "eden",
    message:
      "이 에러 로그 확인 좀 해줘: TypeError: Cannot read properties of undefined (reading 'sessionKey')",
    primary:
      "세션이 만료된 뒤에 들어온 웹훅에서 나는 에러입니다. handler.ts 42번째 줄에서 session 이 없을 때를 처리하지 않아요.",
    turns: [
      "만료된 세션이면 웹훅을 버려도 되는 거야, 아니면 다시 큐에 넣어야 해? 결제 웹훅이라 버리면 안 될 것 같은데.",
      "결제 웹훅은 버리면 안 됩니다. 세션이 없으면 계정 ID로 조회해서 처리하고, 그것도 없으면 데드레터 큐로 보내세요.",
      "데드레터 큐로 보내는 걸로 고칠게. 패치 올리면 리뷰 부탁해.",
      "네, 올라오면 바로 보겠습니다.",
      "고마워.",
    ],
    announce: "none",
    expect: { reason: "max_turns", turns: 1 },
  },
  {
    id: "question-token-rotation",
    intent: QUESTION,
    shape: "English how-question with a follow-up",
    from: "ieum",
    to: "ruda",
    message: "How do we rotate the Discord bot tokens without downtime?",
    primary:
      "Create the new token, put it in the secret store under the next version, restart the bots one at a time, then revoke the old token once all have reconnected.",
    turns: [
      "Does the runtime pick up the new secret version on restart, or do we need to change the deployment too?",
      "On restart: it always reads the latest version. No deployment change needed.",
      "Got it, I'll do it tonight.",
      SKIP,
    ],
    announce: "discord",
    announceReply:
      "Bot token rotation tonight: new secret version, rolling restart, old token revoked afterwards.",
    expect: { reason: "max_turns", turns: 1 },
  },
  {
    id: "question-postmortem-link",
    intent: QUESTION,
    shape: "which-one question, thanks, then politeness",
    from: "eden",
    to: "ieum",
    message: "지난주 장애 회고 문서 링크 뭐가 맞아?",
    primary: "위키의 '2026-11 결제 지연 회고'가 최종본입니다. 드라이브에 있는 건 초안이라 지우려고 해요.",
    turns: [
      "감사합니다. 위키 것으로 볼게요.",
      "네, 초안은 오늘 정리하겠습니다.",
      "좋아요. 정리되면 링크 하나만 채널에 고정해 주세요.",
      "네, 고정해 두겠습니다.",
      "감사합니다.",
    ],
    announce: "none",
    expect: { reason: "minimal_content", turns: 1 },
  },
  {
    id: "question-ci-red",
    intent: QUESTION,
    shape: "why-question ending in a question mark",
    from: "ruda",
    to: "seum",
    message: "seum 브랜치 CI가 왜 빨간지 알아?",
    primary:
      "린트 단계에서 prettier 검사가 실패했습니다. 어제 바꾼 설정 파일 두 개가 포맷이 안 맞아요. 고쳐서 다시 푸시하겠습니다.",
    turns: [
      "알겠어, 고쳐지면 알려 줘.",
      "고쳐서 푸시했고 CI 초록색입니다.",
      "확인했어, 고마워.",
      "천만에요. 다음부터는 커밋 전에 포맷 검사를 돌리겠습니다.",
      SKIP,
    ],
    announce: "internal",
    expect: { reason: "minimal_content", turns: 1 },
  },
  {
    id: "question-backup-check",
    intent: QUESTION,
    shape: "English can-you-check request",
    from: "eden",
    to: "seum",
    message: "can you check whether the nightly backup ran on node-3",
    primary:
      "It ran at 02:10 and finished at 02:47; the snapshot is 212 GB and the checksum matches. The 02:00 slot was delayed by the log rotation.",
    turns: [
      "Thanks, that's all I needed.",
      "You're welcome. I'll keep an eye on the rotation overlap.",
      SKIP,
    ],
    announce: "none",
    expect: { reason: "conclusion_detected", turns: 1 },
  },
  {
    id: "question-rename",
    intent: QUESTION,
    shape: "yes/no question with a short answer",
    from: "seum",
    to: "eden",
    message: "resolveTurns 함수 이름을 resolveEffectiveTurns 로 바꿔도 될까?",
    primary: "바꿔도 됩니다. 외부에 export 되지 않는 함수라 다른 패키지에는 영향이 없어요.",
    turns: [
      "좋아, 바꿀게.",
      "네, 바꾸면서 테스트 이름도 같이 맞춰 주세요.",
      "응, 테스트 이름도 같이 바꿨어.",
      "감사합니다.",
      SKIP,
    ],
    announce: "none",
    expect: { reason: "minimal_content", turns: 1 },
  },
  {
    id: "question-roadmap-together",
    intent: QUESTION,
    shape: "collaborative in substance but phrased as a question: the classifier gives it 1 turn",
    from: "ruda",
    to: "eden",
    message: "이번 분기 로드맵 우선순위, 같이 검토해 줄 수 있어?",
    primary:
      "물론입니다. 지금 순서는 검색 개선, 결제 재시도, 온보딩 순인데 결제 재시도가 장애와 직결되니 첫 번째로 올리는 게 맞다고 봅니다.",
    turns: [
      "결제 재시도를 올리면 검색 개선은 다음 분기로 밀려. 영업팀이 약속한 기능이라 그건 부담이야.",
      "검색 개선 중 영업팀이 약속한 건 필터 두 개뿐입니다. 그 두 개만 떼어서 이번 분기에 넣으면 둘 다 지킬 수 있습니다.",
      "필터 두 개만 떼는 거 좋다. 그럼 순서는 결제 재시도, 검색 필터 두 개, 온보딩으로 하자.",
      "동의합니다. 온보딩은 남는 여력만큼만 진행하는 걸로 문서에 적겠습니다.",
      "좋아, 그렇게 확정하자.",
    ],
    announce: "discord",
    announceReply: "이번 분기 우선순위: 결제 재시도 → 검색 필터 두 개 → 온보딩(여력만큼).",
    expect: { reason: "max_turns", turns: 1 },
  },
];

// Result reports: work finished and reported; the optimised flow allows 1 turn of feedback.
const resultReport: Script[] = [
  {
    id: "result-withdrawal-api",
    intent: RESULT_REPORT,
    shape: "[result] tag, feedback answered once",
    from: "seum",
    to: "ruda",
    message: "[result] 회원 탈퇴 API 리팩터링 끝났어. 테스트 212개 통과, 커버리지 84%.",
    primary: "수고했어요. 탈퇴 후 30일 보관 정책도 반영됐는지만 봐 주세요.",
    turns: [
      "보관 정책은 soft delete 플래그로 반영했고, 야간 배치가 30일 지난 계정을 지웁니다.",
      "좋습니다. 배치 실패 시 알림도 붙어 있나요?",
      "응, 실패하면 온콜 채널로 알림이 가.",
      "확인했습니다. 머지해도 좋습니다.",
      SKIP,
    ],
    announce: "discord",
    announceReply: "회원 탈퇴 API 리팩터링 완료: 테스트 212개 통과, 30일 보관 후 야간 배치 삭제.",
    expect: { reason: "max_turns", turns: 1 },
  },
  {
    id: "result-log-collector",
    intent: RESULT_REPORT,
    shape: "작업 완료 report with numbers",
    from: "eden",
    to: "ieum",
    message: "로그 수집기 교체 작업 완료했습니다. fluent-bit으로 바꿨고 메모리 사용량이 40% 줄었습니다.",
    primary:
      "잘 됐네요. 교체하면서 멀티라인 스택 트레이스가 한 줄로 합쳐지는지 확인해 주세요. 예전 수집기는 그게 깨져 있었어요.",
    turns: [
      "멀티라인 파서를 켜 두었고 자바 서비스 두 곳에서 스택 트레이스가 한 이벤트로 들어오는 걸 확인했어요.",
      "좋습니다. 노드 서비스 쪽도 같은 설정이 먹는지 내일 한 번만 봐 주세요.",
      "네, 내일 확인하겠습니다.",
      "감사합니다.",
      SKIP,
    ],
    announce: "none",
    expect: { reason: "max_turns", turns: 1 },
  },
  {
    id: "result-load-test",
    intent: RESULT_REPORT,
    shape: "결과 보고 of a load test",
    from: "ieum",
    to: "ruda",
    message: "부하 테스트 결과 보고드립니다. p99 지연 180ms로 목표 200ms 이내입니다.",
    primary: "좋네요. 피크 시간대 트래픽의 두 배로 돌린 결과인가요, 평균 트래픽 기준인가요?",
    turns: [
      "피크의 두 배 기준이에요. 세 배에서는 p99가 340ms까지 올라가서 그 구간은 따로 보고서에 적었어요.",
      "세 배 구간은 연말 이벤트 때나 나오니 지금은 괜찮습니다. 보고서 링크만 채널에 남겨 주세요.",
      "네, 채널에 남겼어요.",
      SKIP,
    ],
    announce: "discord",
    announceReply: "부하 테스트: 피크 2배에서 p99 180ms(목표 200ms 이내), 3배에서 340ms. 보고서는 채널에.",
    expect: { reason: "max_turns", turns: 1 },
  },
  {
    id: "result-dependency-audit",
    intent: RESULT_REPORT,
    shape: "분석 결과 shared, acknowledged",
    from: "seum",
    to: "eden",
    message: "의존성 취약점 분석 결과 공유합니다. high 2건이고 둘 다 패치 버전이 나와 있어요.",
    primary:
      "둘 다 이번 주 안에 올려 주세요. 하나는 런타임 의존성이라 배포 전에 스테이징에서 한 번 돌려 보는 게 좋겠습니다.",
    turns: [
      "알겠습니다. 오늘 PR 올리고 스테이징에서 확인할게요.",
      "좋아요. PR 올라오면 리뷰하겠습니다.",
      "PR 올렸어요.",
      "확인했습니다. 승인했어요.",
      "감사합니다.",
    ],
    announce: "none",
    expect: { reason: "conclusion_detected", turns: 1 },
  },
  {
    id: "result-flaky-test",
    intent: RESULT_REPORT,
    shape: "English task-complete report",
    from: "eden",
    to: "seum",
    message: "Task complete: the flaky webhook test is fixed, it was a race in the retry timer.",
    primary:
      "Nice. Did the fix go into the timer itself or only into the test? If it is the timer, production had the race too.",
    turns: [
      "The timer itself: it could fire twice when a retry was scheduled during a restart. Production had it, rarely; I added a regression test.",
      "Then it deserves a line in the changelog. Good catch.",
      "Added to the changelog under fixes.",
      "Thanks.",
      SKIP,
    ],
    announce: "discord",
    announceReply:
      "Fixed: the retry timer could fire twice when a retry was scheduled during a restart (regression test added).",
    expect: { reason: "max_turns", turns: 1 },
  },
  {
    id: "result-search-reindex",
    intent: RESULT_REPORT,
    shape: "[outcome] tag, short acknowledgement",
    from: "ieum",
    to: "eden",
    message: "[outcome] 검색 인덱스 재구축 끝. 누락 문서 0건, 소요 시간 2시간 10분.",
    primary: "수고했어요. 다음 재구축부터는 야간에 자동으로 돌게 스케줄만 걸어 주세요.",
    turns: ["네, 매주 일요일 새벽 3시로 스케줄 걸어 둘게요.", "좋습니다.", "걸어 두었어요.", SKIP],
    announce: "none",
    expect: { reason: "max_turns", turns: 1 },
  },
  {
    id: "result-meeting-summary",
    intent: RESULT_REPORT,
    shape: "worker's 작업 완료 report to its main agent",
    from: "worker-quick",
    to: "ruda",
    message: "요약 작업 완료: 어제 회의록 3건 요약을 노션에 올렸어요.",
    primary: "고마워요. 결정 사항만 따로 모은 목록도 맨 위에 붙여 주세요.",
    turns: [
      "완료. 결정 사항 7개를 맨 위에 모아 두었어요.",
      "좋네요. 담당자 이름도 붙어 있으면 더 좋겠어요.",
      "담당자 이름 붙였어요.",
      "고마워요.",
      SKIP,
    ],
    announce: "internal",
    expect: { reason: "conclusion_detected", turns: 1 },
  },
  {
    id: "result-ab-test",
    intent: RESULT_REPORT,
    shape: "English results report with a follow-up",
    from: "seum",
    to: "ruda",
    message: "Reporting the results of the A/B test: variant B raised sign-ups by 3.2% (p = 0.04).",
    primary:
      "Good result. p = 0.04 with a two-week window is borderline; did the novelty effect fade in the second week?",
    turns: [
      "The lift was 3.9% in week one and 2.6% in week two, so some novelty, but still positive.",
      "Then ship B, and keep the experiment flag for a month so we can compare again.",
      "Shipping B behind the flag today.",
      "Great.",
      SKIP,
    ],
    announce: "discord",
    announceReply:
      "A/B test: variant B ships today (+3.2% sign-ups, 3.9% → 2.6% over two weeks), flag kept for a month.",
    expect: { reason: "max_turns", turns: 1 },
  },
];

// Notifications: tagged, no answer expected. Both flows skip the ping-pong (the old code already
// skipped on these tags); only the announce step differs.
const notification: Script[] = [
  {
    id: "notify-db-maintenance",
    intent: NOTIFICATION,
    shape: "[NOTIFICATION] maintenance notice for a channel",
    from: "eden",
    to: "ruda",
    message: "[NOTIFICATION] 오늘 18시에 스테이징 DB 점검이 있습니다. 30분간 쓰기 불가.",
    primary: "확인했습니다. 팀 채널에도 공지하겠습니다.",
    turns: [],
    announce: "discord",
    announceReply: "오늘 18시부터 30분간 스테이징 DB 점검으로 쓰기가 막힙니다.",
    expect: { reason: "skipped", turns: 0 },
  },
  {
    id: "notify-no-reply-needed",
    intent: NOTIFICATION,
    shape: "[NO_REPLY_NEEDED] FYI between agents",
    from: "ieum",
    to: "seum",
    message: "[NO_REPLY_NEEDED] 내일 오전은 외부 미팅이라 리뷰 요청은 오후에 볼게.",
    primary: "네, 오후에 요청드리겠습니다.",
    turns: [],
    announce: "none",
    expect: { reason: "skipped", turns: 0 },
  },
  {
    id: "notify-cert-renewed",
    intent: NOTIFICATION,
    shape: "[NOTIFICATION] certificate renewed",
    from: "seum",
    to: "eden",
    message: "[NOTIFICATION] api.example.com TLS 인증서 갱신 완료. 만료일 2027-02-20.",
    primary: "확인했습니다.",
    turns: [],
    announce: "none",
    expect: { reason: "skipped", turns: 0 },
  },
  {
    id: "notify-release-notes",
    intent: NOTIFICATION,
    shape: "[NOTIFICATION] English release notice for a channel",
    from: "ruda",
    to: "ieum",
    message: "[NOTIFICATION] v2.14 is out: payment retries now respect Retry-After. No action needed.",
    primary: "Noted. I'll mention it in tomorrow's stand-up summary.",
    turns: [],
    announce: "discord",
    announceReply: "v2.14 released: payment retries now respect Retry-After.",
    expect: { reason: "skipped", turns: 0 },
  },
  {
    id: "notify-worker-progress",
    intent: NOTIFICATION,
    shape: "[NO_REPLY_NEEDED] worker progress ping",
    from: "worker-deep",
    to: "ruda",
    message: "[NO_REPLY_NEEDED] 코드베이스 분석 60% 진행 중. 남은 시간 약 20분.",
    primary: "알겠어요.",
    turns: [],
    announce: "internal",
    expect: { reason: "skipped", turns: 0 },
  },
  {
    id: "notify-vacation",
    intent: NOTIFICATION,
    shape: "[NOTIFICATION] absence notice",
    from: "eden",
    to: "seum",
    message: "[NOTIFICATION] 다음 주 월요일 휴가야. 급한 리뷰는 ieum에게 부탁해 둘게.",
    primary: "네, 잘 다녀오세요.",
    turns: [],
    announce: "none",
    expect: { reason: "skipped", turns: 0 },
  },
];

// Escalations: urgent, tagged. The optimised flow skips the ping-pong and announces at once; the
// old code only skipped on the notification tags, so it ran its ping-pong on these too.
const escalation: Script[] = [
  {
    id: "escalate-payment-errors",
    intent: ESCALATION,
    shape: "[URGENT] error-rate spike after a deploy",
    from: "seum",
    to: "ruda",
    message: "[URGENT] 결제 API 에러율 30% 넘었어. 방금 배포한 v2.14 롤백 판단 필요.",
    primary: "바로 롤백하세요. 롤백 승인합니다. 고객 공지는 제가 준비하겠습니다.",
    turns: [
      "롤백 시작했어. 5분 정도 걸려.",
      "롤백 끝나면 에러율 그래프 캡처해서 공유해 주세요. 공지에 넣겠습니다.",
      "롤백 완료, 에러율 0.3%로 돌아왔어. 그래프 첨부했어.",
      "확인했습니다. 공지 올렸고 회고는 내일 오전에 잡겠습니다.",
      "알겠어. 원인은 오늘 안에 정리해 둘게.",
    ],
    announce: "discord",
    announceReply: "결제 API 에러율 급증으로 v2.14를 롤백합니다. 진행 상황은 이 채널에서 공유합니다.",
    expect: { reason: "skipped", turns: 0 },
  },
  {
    id: "escalate-export-stuck",
    intent: ESCALATION,
    shape: "[ESCALATION] stuck job needing a human",
    from: "worker-deep",
    to: "ieum",
    message: "[ESCALATION] 고객 데이터 export 작업이 6시간째 멈춰 있어. 사람 확인이 필요해.",
    primary: "담당자를 호출했습니다. 작업 ID와 마지막 로그 위치를 스레드에 남겨 주세요.",
    turns: [
      "작업 ID exp-20261122-07, 마지막 로그는 청크 41/120 업로드 중 타임아웃이야.",
      "전달했습니다. 담당자가 재시작 여부를 판단할 거예요.",
      SKIP,
    ],
    announce: "discord",
    announceReply: "고객 데이터 export(exp-20261122-07)가 6시간째 멈춰 담당자를 호출했습니다.",
    expect: { reason: "skipped", turns: 0 },
  },
  {
    id: "escalate-disk-full",
    intent: ESCALATION,
    shape: "[URGENT] disk nearly full",
    from: "seum",
    to: "eden",
    message: "[URGENT] prod-db-2 디스크 사용량 95%, 로그 로테이션이 멈췄어.",
    primary: "WAL 아카이브가 쌓인 것 같습니다. 아카이브 대상 버킷 권한이 어제 바뀌었는지 봐 주세요.",
    turns: [
      "맞아, 어제 버킷 정책 변경 후로 업로드가 실패하고 있었어. 권한 되돌렸어.",
      "업로드가 재개되면 한 시간 안에 사용량이 내려갈 겁니다. 그동안 오래된 로그만 수동으로 지워 주세요.",
      "오래된 로그 지워서 88%까지 내려왔어.",
      "좋습니다. 버킷 정책 변경에 리뷰 절차를 넣자고 회고에 올리겠습니다.",
      "동의해. 회고 안건에 넣어 줘.",
    ],
    announce: "discord",
    announceReply:
      "prod-db-2 디스크 95%: WAL 아카이브 업로드 실패(버킷 권한)로 인한 것, 권한 복구 후 조치 중.",
    expect: { reason: "skipped", turns: 0 },
  },
  {
    id: "escalate-token-leak",
    intent: ESCALATION,
    shape: "[URGENT] English security incident",
    from: "ieum",
    to: "ruda",
    message: "[URGENT] A Discord bot token leaked in a public gist; it must be revoked now.",
    primary: "Revoking it now and rotating the bot's token; I'll check the audit log for misuse.",
    turns: [
      "The gist is deleted too. It was public for about 40 minutes.",
      "Token revoked and rotated. The audit log shows no actions from unknown IPs in that window.",
      "Good. I'll write the incident note.",
      SKIP,
    ],
    announce: "discord",
    announceReply:
      "A bot token was exposed for ~40 minutes; it has been revoked and rotated, no misuse found.",
    expect: { reason: "skipped", turns: 0 },
  },
];

export const SCRIPTS: readonly Script[] = [
  ...collaboration,
  ...question,
  ...resultReport,
  ...notification,
  ...escalation,
];
