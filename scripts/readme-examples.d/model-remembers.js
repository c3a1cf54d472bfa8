// The model of the README's AI SDK example, which names `model` and leaves
// choosing one to the reader: the AI SDK's own mock language model, which
// calls the remember tool once and then answers.
import { MockLanguageModelV3 } from "ai/test";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
let calls = 0;
const model = new MockLanguageModelV3({
  doGenerate: async () => {
    if (calls++ === 0) {
      return {
        content: [{ type: "tool-call", toolCallId: "call-1", toolName: "remember",
          input: JSON.stringify({ content: "Alice's sister lives in Lisbon.", kind: "fact" }) }],
        finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [],
      };
    }
    return { content: [{ type: "text", text: "Noted." }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
  },
});
