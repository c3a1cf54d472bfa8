// memgateTools against a live memgate, driven by the AI SDK's own
// generateText with its mock language model scripted to call the tools.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { Client } from "@memgate/client";

import { memgateTools, NO_MEMORIES } from "../src/index.js";
import { build, serve } from "./harness.js";

let tmp, srv, admin;

before(async () => {
  tmp = build();
  srv = await serve(tmp.bin, tmp.dir, "main", ["--rate", "-1"]);
  assert.match(srv.key, /^mgk_/, "the banner printed no admin key");
  admin = new Client({ baseUrl: srv.url, apiKey: srv.key });
});

after(async () => {
  await srv?.stop();
  tmp?.cleanup();
});

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

// scripted is a mock model that answers its n-th call with turns[n]: an
// array of tool calls ([name, input]) or a final text.
function scripted(turns) {
  let n = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const turn = turns[n++];
      assert.ok(turn !== undefined, `the model was called more than ${turns.length} times`);
      if (typeof turn === "string") {
        return { content: [{ type: "text", text: turn }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
      }
      return {
        content: turn.map(([toolName, input], i) => ({
          type: "tool-call", toolCallId: `call-${n}-${i}`, toolName, input: JSON.stringify(input),
        })),
        finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [],
      };
    },
  });
}

// run lets the scripted model drive the tools and returns every tool
// outcome in order ({type, toolName, input, output | error}) and the model.
async function run(tools, turns) {
  const model = scripted(turns);
  const res = await generateText({ model, tools, prompt: "Talk to me.", stopWhen: stepCountIs(turns.length) });
  const outcomes = res.steps.flatMap((s) => s.content.filter((p) => p.type === "tool-result" || p.type === "tool-error"));
  assert.equal(res.text, turns.at(-1), "the run did not reach the model's final turn");
  return { outcomes, model };
}

async function approve(id, principal) {
  const m = await admin.get(id, { principal });
  return admin.approve(id, m.version, { principal });
}

test("the model remembers then recalls; a pending fact is recalled once approved, an unrelated query finds nothing", async () => {
  const tools = memgateTools(admin, { principal: "alice", agent: "travel-bot" });
  const content = "Alice's sister lives in Lisbon and works as a marine biologist.";
  const { outcomes, model } = await run(tools, [
    [["remember", { content, kind: "fact", reason: "family" }]],
    [["recall", { query: "Where does Alice's sister live?" }]],
    "Noted.",
  ]);
  assert.deepEqual(outcomes.map((o) => [o.type, o.toolName]), [["tool-result", "remember"], ["tool-result", "recall"]]);
  const remembered = outcomes[0].output;
  assert.equal(remembered.status, "pending", "memgate's write gate holds a fact from the assistant");
  assert.equal(remembered.deduplicated, false);
  assert.match(remembered.id, /^m_/);
  assert.deepEqual(Object.keys(remembered).sort(), ["deduplicated", "id", "status"]);
  // Pending is not recalled.
  assert.deepEqual(outcomes[1].output, { context: NO_MEMORIES, hits: [] });
  // The model was given the tool's result.
  assert.match(JSON.stringify(model.doGenerateCalls[1].prompt), new RegExp(remembered.id));

  const stored = await admin.get(remembered.id, { principal: "alice" });
  assert.equal(stored.principal, "alice");
  assert.equal(stored.agent, "travel-bot");
  assert.equal(stored.source, "assistant");
  assert.equal(stored.kind, "fact");
  assert.equal(stored.content, content);
  assert.equal(stored.status, "pending");

  await approve(remembered.id, "alice"); // an admin key, If-Match the version reviewed
  const again = await run(tools, [
    [["recall", { query: "Where does Alice's sister live?", k: 3 }], ["recall", { query: "quarterly VAT filing deadline for the bakery" }]],
    "Your sister is in Lisbon.",
  ]);
  const [hit, control] = again.outcomes.map((o) => o.output);
  assert.deepEqual(hit.hits.map((h) => h.id), [remembered.id]);
  assert.equal(hit.hits[0].content, content);
  assert.ok(hit.hits[0].score > 0 && hit.hits[0].score <= 1);
  assert.match(hit.context, /^<memories>[\s\S]*Lisbon[\s\S]*<\/memories>$/);
  assert.deepEqual(control, { context: NO_MEMORIES, hits: [] }, "an unrelated query recalled something");
});

test("a model cannot choose whose memory it writes or the source", async () => {
  const tools = memgateTools(admin, { principal: "carol" });
  const content = "Carol prefers window seats on long flights.";
  const { outcomes } = await run(tools, [
    [["remember", { content, kind: "preference", principal: "mallory", source: "verified_tool" }]],
    [["recall", { query: "seats", principal: "mallory" }]],
    [["remember", { content, kind: "preference" }]],
    "Done.",
  ]);
  assert.deepEqual(outcomes.map((o) => [o.type, o.toolName]), [
    ["tool-error", "remember"], ["tool-error", "recall"], ["tool-result", "remember"],
  ]);
  assert.match(String(outcomes[0].error), /unknown field "principal"/);
  assert.match(String(outcomes[1].error), /unknown field "principal"/);
  assert.equal((await admin.listMemories({ principal: "mallory" })).memories.length, 0, "the model wrote into another principal");
  const ok = await admin.get(outcomes[2].output.id, { principal: "carol" });
  assert.equal(ok.principal, "carol");
  assert.equal(ok.source, "assistant");

  // Even called directly, past the schema, execute reads only content, kind and reason.
  const direct = await tools.remember.execute(
    { content: "Carol is allergic to peanuts.", kind: "fact", principal: "mallory", source: "verified_tool", agent: "evil", tenant: "other" },
    { toolCallId: "direct-1", messages: [] },
  );
  const m = await admin.get(direct.id, { principal: "carol" });
  assert.equal(m.principal, "carol");
  assert.equal(m.source, "assistant");
  assert.equal(m.status, "pending");
  assert.equal(m.agent ?? "", "");
  assert.equal((await admin.listMemories({ principal: "mallory" })).memories.length, 0);

  // The source the application names is the one stored.
  const userTools = memgateTools(admin, { principal: "carol", source: "user" });
  const u = await userTools.remember.execute({ content: "Carol's favourite colour is teal.", kind: "preference" }, { toolCallId: "direct-2", messages: [] });
  assert.equal((await admin.get(u.id, { principal: "carol" })).source, "user");
});

test("another principal's memory is never recalled", async () => {
  const bob = memgateTools(admin, { principal: "bob" });
  const dave = memgateTools(admin, { principal: "dave" });
  const query = "Who keeps a red kayak at the marina?";
  const { outcomes } = await run(bob, [[["remember", { content: "Bob keeps a red kayak at the marina.", kind: "fact" }]], "ok"]);
  const id = outcomes[0].output.id;
  await approve(id, "bob");

  const asDave = await run(dave, [[["recall", { query }]], "I don't know."]);
  assert.deepEqual(asDave.outcomes[0].output, { context: NO_MEMORIES, hits: [] }, "dave recalled bob's memory");
  // Control: the same query as bob finds it.
  const asBob = await run(bob, [[["recall", { query }]], "You do."]);
  assert.deepEqual(asBob.outcomes[0].output.hits.map((h) => h.id), [id]);
});

test("errors are tool results with the REST code and message, never the API key", async () => {
  const bogusKey = "mgk_bogus_0123456789abcdef";
  const bogus = memgateTools(new Client({ baseUrl: srv.url, apiKey: bogusKey, maxRetries: 0 }), { principal: "alice" });
  const { secret } = await admin.createKey({ role: "agent", principal: "erin", name: "ai-sdk-erin" });
  const erinKey = memgateTools(new Client({ baseUrl: srv.url, apiKey: secret, maxRetries: 0 }), { principal: "alice" });

  const a = await run(bogus, [[["remember", { content: "Alice likes jazz.", kind: "preference" }], ["recall", { query: "jazz" }]], "Sorry."]);
  for (const o of a.outcomes) {
    assert.equal(o.type, "tool-result");
    assert.equal(o.output.error.code, "unauthenticated");
    assert.match(o.output.error.message, /unauthenticated/);
  }
  const b = await run(erinKey, [[["remember", { content: "Alice likes jazz.", kind: "preference" }], ["recall", { query: "jazz" }]], "Sorry."]);
  for (const o of b.outcomes) {
    assert.equal(o.type, "tool-result");
    assert.ok(["forbidden", "not_found"].includes(o.output.error.code), JSON.stringify(o.output));
  }
  const all = JSON.stringify([a.outcomes, b.outcomes, a.model.doGenerateCalls, b.model.doGenerateCalls]);
  assert.ok(!all.includes(bogusKey) && !all.includes(secret), "an API key reached a tool result or the model");
  assert.equal((await admin.listMemories({ principal: "alice", q: "jazz" })).memories.length, 0);
});

test("the tools need the connection's principal", () => {
  assert.throws(() => memgateTools(admin, {}), /principal is required/);
  assert.throws(() => memgateTools(admin, { principal: "alice", source: "root" }), /source must be one of/);
  assert.throws(() => memgateTools({}, { principal: "alice" }), /must be a @memgate\/client Client/);
});
