// The entry point `a2a-statecharts-openclaw/testing`: a fake OpenAI-compatible chat-completions server
// for OpenClaw's `openai-completions` provider api, so an OpenClaw gateway's agents answer from a script
// in tests, without an LLM.
export { startFakeModel } from "./fakeModel/FakeModel.js";
export { parseRuntimeLine } from "./fakeModel/parse.js";
export type {
  FakeChatMessage,
  FakeContentPart,
  FakeErrorTurn,
  FakeMessageToolCall,
  FakeModel,
  FakeModelAnswer,
  FakeModelOptions,
  FakeModelRequest,
  FakeModelScript,
  FakeScriptEntry,
  FakeSessionMatch,
  FakeSilentToken,
  FakeSilentTurn,
  FakeTextTurn,
  FakeToolCallTurn,
  FakeToolDefinition,
  FakeToolResult,
  FakeTurn,
  FakeTurns,
  FakeTurnSource,
  RecordedModelRequest,
} from "./fakeModel/types.js";
