// MemgateStore against a live memgate, through LangGraph's own BaseStore
// (@langchain/langgraph-checkpoint from npm): its get/put/delete/search/
// listNamespaces call our batch.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { BaseStore, InvalidNamespaceError } from "@langchain/langgraph-checkpoint";
import { Client, ForbiddenError } from "@memgate/client";
import { MemgateStore } from "../dist/index.js";
import { start } from "./harness.js";

let server, admin, alice, aliceVerified, bob, aliceA1;

before(async () => {
  server = await start();
  admin = new Client({ baseUrl: server.url, apiKey: server.key, maxRetries: 0 });
  const store = async (input, opts = {}) => {
    const k = await admin.createKey(input);
    return new MemgateStore({ client: { baseUrl: server.url, apiKey: k.secret, maxRetries: 0 }, ...opts });
  };
  alice = await store({ role: "agent", principal: "alice" }); // source assistant: facts held pending
  aliceVerified = await store({ role: "agent", principal: "alice", sources: ["verified_tool"] }, { source: "verified_tool" });
  bob = await store({ role: "agent", principal: "bob" });
  aliceA1 = await store({ role: "agent", principal: "alice", agent: "a1" });
});

after(async () => { await server?.stop(); });

// The memories holding an item, in any status.
async function memoriesOf(principal, key) {
  const out = [];
  for await (const m of admin.memories({ principal, status: ["active", "pending", "revoked", "superseded"] })) {
    if (m.metadata?.lg_key === key) out.push(m);
  }
  return out;
}

test("is a BaseStore", () => {
  assert.ok(alice instanceof BaseStore);
});

test("put then get reads the value back, pending until approved; recall sees it once approved", async () => {
  await alice.put(["alice"], "drink", { content: "Alice drinks green tea", since: 2020 });
  const item = await alice.get(["alice"], "drink");
  assert.deepEqual(item.value, { content: "Alice drinks green tea", since: 2020 });
  assert.deepEqual(item.namespace, ["alice"]);
  assert.equal(item.key, "drink");
  assert.ok(item.createdAt instanceof Date && item.updatedAt instanceof Date);
  assert.equal(item.memgate.status, "pending"); // an assistant's fact waits for a person
  assert.equal(item.memgate.kind, "fact");
  const [m] = await memoriesOf("alice", "drink");
  assert.equal(m.content, "drink: Alice drinks green tea");
  assert.deepEqual(m.metadata, { lg_key: "drink", lg_value: { content: "Alice drinks green tea", since: 2020 } });

  assert.deepEqual(await alice.search(["alice"], { query: "green tea" }), [], "pending memories are never recalled");
  await admin.approve(m.id, m.version, { principal: "alice" });
  const hits = await alice.search(["alice"], { query: "green tea" });
  assert.equal(hits.length, 1);
  assert.equal(hits[0].key, "drink");
  assert.ok(hits[0].score > 0);
});

test("a re-put supersedes: one active memory, the old one superseded", async () => {
  const s = aliceVerified;
  await s.put(["alice", "planner"], "city", { content: "Alice lives in Paris" });
  await s.put(["alice", "planner"], "city", { content: "Alice lives in Berlin" });
  assert.equal((await s.get(["alice", "planner"], "city")).value.content, "Alice lives in Berlin");
  let ms = await memoriesOf("alice", "city");
  assert.equal(ms.length, 2);
  const active = ms.filter((m) => m.status === "active");
  const old = ms.find((m) => m.status === "superseded");
  assert.equal(active.length, 1);
  assert.equal(old.content, "city: Alice lives in Paris");
  assert.equal(old.superseded_by, active[0].id);
  assert.equal(active[0].agent, "planner");

  await s.put(["alice", "planner"], "city", { content: "Alice lives in Berlin" }); // the same value: no write
  assert.equal((await memoriesOf("alice", "city")).length, 2);
  const hits = await s.search(["alice"], { query: "where does Alice live Berlin" });
  const cities = hits.filter((h) => h.key === "city");
  assert.deepEqual(cities.map((h) => [h.namespace, h.value.content]), [[["alice", "planner"], "Alice lives in Berlin"]]); // never the superseded Paris
  assert.equal(hits[0].key, "city");
});

test("a re-put over a pending value replaces it; over an approved one it waits, and get shows the newest", async () => {
  await alice.put(["alice"], "pet", { content: "Alice has a cat" });
  await alice.put(["alice"], "pet", { content: "Alice has two cats" });
  let ms = await memoriesOf("alice", "pet");
  assert.deepEqual(ms.map((m) => m.status).sort(), ["pending", "revoked"]);
  assert.equal((await alice.get(["alice"], "pet")).value.content, "Alice has two cats");

  const p = ms.find((m) => m.status === "pending");
  await admin.approve(p.id, p.version, { principal: "alice" });
  await alice.put(["alice"], "pet", { content: "Alice has a dog" });
  const item = await alice.get(["alice"], "pet");
  assert.equal(item.value.content, "Alice has a dog");
  assert.equal(item.memgate.status, "pending");
  ms = await memoriesOf("alice", "pet");
  const next = ms.find((m) => m.status === "pending");
  assert.equal(next.supersedes, p.id);
  await admin.approve(next.id, next.version, { principal: "alice" });
  ms = await memoriesOf("alice", "pet");
  assert.deepEqual(ms.filter((m) => m.status === "active").map((m) => m.content), ["pet: Alice has a dog"]);
  assert.equal(ms.find((m) => m.id === p.id).status, "superseded");
});

test("two keys with the same value stay two items", async () => {
  await alice.put(["alice"], "x1", { v: 1 });
  await alice.put(["alice"], "x2", { v: 1 });
  assert.deepEqual((await alice.get(["alice"], "x1")).value, { v: 1 });
  assert.deepEqual((await alice.get(["alice"], "x2")).value, { v: 1 });
  assert.notEqual((await alice.get(["alice"], "x1")).memgate.id, (await alice.get(["alice"], "x2")).memgate.id);
});

test("search without a query: namespace prefix, filter with operators, limit and offset", async () => {
  for (let i = 0; i < 5; i++) await alice.put(["alice", "shop", "c1"], `order${i}`, { type: i % 2 ? "odd" : "even", n: i, kind: "task" });
  await alice.put(["alice", "shop"], "cart", { type: "even", n: 100 });
  const all = await alice.search(["alice", "shop"], { limit: 100 });
  assert.equal(all.length, 6);
  const inConv = await alice.search(["alice", "shop", "c1"], { limit: 100 });
  assert.equal(inConv.length, 5);
  assert.ok(inConv.every((i) => i.memgate.kind === "task" && i.memgate.status === "active")); // tasks from an assistant are allowed
  const even = await alice.search(["alice", "shop"], { filter: { type: "even" }, limit: 100 });
  assert.deepEqual(even.map((i) => i.value.n).sort((a, b) => a - b), [0, 2, 4, 100]);
  const big = await alice.search(["alice", "shop"], { filter: { n: { $gte: 3 }, type: { $in: ["odd", "even"] } }, limit: 100 });
  assert.deepEqual(big.map((i) => i.value.n).sort((a, b) => a - b), [3, 4, 100]);
  const page1 = await alice.search(["alice", "shop"], { limit: 2 });
  const page2 = await alice.search(["alice", "shop"], { limit: 2, offset: 2 });
  assert.equal(page1.length, 2);
  assert.equal(page2.length, 2);
  assert.equal(new Set([...page1, ...page2].map((i) => i.key)).size, 4);
  // [alice] as a prefix holds every namespace below it.
  assert.ok((await alice.search(["alice"], { limit: 100 })).some((i) => i.key === "order3"));
});

test("delete revokes, and get answers null like a missing key", async () => {
  await alice.put(["alice"], "tmp", { content: "temporary" });
  await alice.delete(["alice"], "tmp");
  assert.equal(await alice.get(["alice"], "tmp"), null);
  assert.deepEqual((await memoriesOf("alice", "tmp")).map((m) => m.status), ["revoked"]);
  await alice.delete(["alice"], "never-there"); // a missing key: nothing to do
});

test("foreign = missing: another principal's namespace reads like an empty one (with its populated control)", async () => {
  await bob.put(["bob"], "secret-plan", { content: "Bob plans a surprise party" });
  // Control: the item is there, for the key that may reach it.
  assert.equal((await bob.get(["bob"], "secret-plan")).value.content, "Bob plans a surprise party");
  assert.equal((await bob.search(["bob"])).length, 1);
  assert.deepEqual(await bob.listNamespaces({ prefix: ["bob"] }), [["bob"]]);
  // Alice's key: exactly as a missing key.
  assert.equal(await alice.get(["bob"], "secret-plan"), null);
  assert.equal(await alice.get(["alice"], "no-such-key"), null);
  assert.deepEqual(await alice.search(["bob"]), []);
  assert.deepEqual(await alice.search(["bob"], { query: "surprise party" }), []);
  assert.deepEqual(await alice.listNamespaces({ prefix: ["bob"] }), []);
  await alice.delete(["bob"], "secret-plan"); // a no-op, as for a missing key
  assert.ok(await bob.get(["bob"], "secret-plan"));
  // Writing there is refused, not dropped.
  await assert.rejects(alice.put(["bob"], "k", { v: 1 }), (e) => e instanceof ForbiddenError && e.field === "principal");
});

test("isolation: the same namespace labels under two principals are two stores", async () => {
  await alice.put(["alice", "notes"], "todo", { content: "buy milk" });
  await bob.put(["bob", "notes"], "todo", { content: "buy bread" });
  assert.equal((await alice.get(["alice", "notes"], "todo")).value.content, "buy milk");
  assert.equal((await bob.get(["bob", "notes"], "todo")).value.content, "buy bread");
  assert.ok((await alice.search([], { limit: 100 })).every((i) => i.namespace[0] === "alice"));
  assert.ok((await bob.search([], { limit: 100 })).every((i) => i.namespace[0] === "bob"));
});

test("listNamespaces: prefix, suffix with wildcards, maxDepth, limit and offset", async () => {
  await alice.put(["alice", "~", "c9"], "loose", { content: "a conversation with no agent" });
  const all = await alice.listNamespaces();
  for (const ns of [["alice"], ["alice", "notes"], ["alice", "planner"], ["alice", "shop"], ["alice", "shop", "c1"], ["alice", "~", "c9"]]) {
    assert.ok(all.some((x) => JSON.stringify(x) === JSON.stringify(ns)), `missing ${ns}`);
  }
  assert.ok(all.every((ns) => ns[0] === "alice"));
  assert.deepEqual(await alice.listNamespaces({ prefix: ["alice", "shop"] }), [["alice", "shop"], ["alice", "shop", "c1"]]);
  assert.deepEqual(await alice.listNamespaces({ suffix: ["*", "c1"] }), [["alice", "shop", "c1"]]);
  assert.deepEqual(await alice.listNamespaces({ prefix: ["alice", "*", "c1"] }), [["alice", "shop", "c1"]]);
  const depth1 = await alice.listNamespaces({ maxDepth: 1 });
  assert.deepEqual(depth1, [["alice"]]);
  const two = await alice.listNamespaces({ limit: 2, offset: 1 });
  assert.deepEqual(two, all.slice(1, 3));
});

test("batch runs every kind of operation in order", async () => {
  const ns = ["alice", "batch"];
  const r = await alice.batch([
    { namespace: ns, key: "b1", value: { content: "first", kind: "task" } },
    { namespace: ns, key: "b1" },
    { namespacePrefix: ns, limit: 10, offset: 0 },
    { matchConditions: [{ matchType: "prefix", path: ns }], limit: 10, offset: 0 },
    { namespace: ns, key: "b1", value: null },
    { namespace: ns, key: "b1" },
  ]);
  assert.equal(r.length, 6);
  assert.equal(r[0], undefined);
  assert.equal(r[1].value.content, "first");
  assert.deepEqual(r[2].map((i) => i.key), ["b1"]);
  assert.deepEqual(r[3], [ns]);
  assert.equal(r[4], undefined);
  assert.equal(r[5], null);
});

test("namespaces memgate cannot hold are refused clearly", async () => {
  await assert.rejects(alice.put(["alice", "a", "c", "deeper"], "k", { v: 1 }), (e) => e instanceof InvalidNamespaceError && /deeper/.test(e.message));
  await assert.rejects(alice.batch([{ namespace: [], key: "k", value: { v: 1 } }]), InvalidNamespaceError);
  await assert.rejects(alice.put(["alice", "has space"], "k", { v: 1 }), InvalidNamespaceError);
  await assert.rejects(alice.put(["alice", "~"], "k", { v: 1 }), InvalidNamespaceError);
  await assert.rejects(alice.search(["a", "b", "c", "d"]), InvalidNamespaceError);
});

test("an agent-bound key writes only into its agent's namespace", async () => {
  await assert.rejects(aliceA1.put(["alice"], "k", { v: 1 }), (e) => e instanceof ForbiddenError && e.field === "agent" && /a1/.test(e.message));
  await assert.rejects(aliceA1.put(["alice", "a2"], "k", { v: 1 }), (e) => e instanceof ForbiddenError && e.field === "agent");
  await aliceA1.put(["alice", "a1"], "k", { v: 1, kind: "task" });
  assert.deepEqual((await aliceA1.get(["alice", "a1"], "k")).value, { v: 1, kind: "task" });
  assert.equal(await aliceA1.get(["alice", "a2"], "k"), null); // another agent's: foreign = missing
});

test("a put never replaces or deletes what another writer put under the key (issue 26), with its control", async () => {
  const k = await admin.createKey({ role: "user", principal: "alice" });
  const person = new MemgateStore({ client: { baseUrl: server.url, apiKey: k.secret, maxRetries: 0 }, source: "user" });
  await person.put(["alice"], "seat", { content: "Alice prefers window seats" });
  const [said] = await memoriesOf("alice", "seat");
  assert.equal(said.source, "user");
  await aliceVerified.put(["alice"], "seat", { content: "Alice prefers aisle seats" }); // no 403: the agent's own item
  let ms = await memoriesOf("alice", "seat");
  assert.deepEqual(ms.map((m) => [m.source, m.status]).sort(), [["user", "active"], ["verified_tool", "active"]]);
  assert.equal((await aliceVerified.get(["alice"], "seat")).value.content, "Alice prefers aisle seats");
  await aliceVerified.delete(["alice"], "seat"); // revokes its own only
  ms = await memoriesOf("alice", "seat");
  assert.deepEqual(ms.map((m) => [m.source, m.status]).sort(), [["user", "active"], ["verified_tool", "revoked"]]);
  // Control: the person's re-put supersedes the person's own.
  await person.put(["alice"], "seat", { content: "Alice prefers exit-row seats" });
  ms = await memoriesOf("alice", "seat");
  assert.equal(ms.find((m) => m.id === said.id).status, "superseded");
  assert.equal((await person.get(["alice"], "seat")).value.content, "Alice prefers exit-row seats");
});
