// The client against a live memgate: every operation, its error model, its
// retries and its iterators. Run after the build (npm test): it imports dist/.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import {
  Client, ConflictError, ForbiddenError, InvalidArgumentError, MemgateError, NotFoundError,
  RateLimitedError, TransportError, UnauthenticatedError, UnavailableError,
} from "../dist/index.js";
import { build, fakeModel, serve } from "./harness.js";

const reply = "Noted: green tea, no sugar.";
let tmp, srv, model, admin, adminKey;
const called = new Set();

// track records which Client methods the tests call, for the coverage test.
function track(c) {
  return new Proxy(c, {
    get(target, prop) {
      const v = target[prop];
      if (typeof v !== "function") return v;
      return (...args) => {
        called.add(prop);
        return v.apply(target, args);
      };
    },
  });
}

function client(opts = {}) {
  return track(new Client({ baseUrl: srv.url, apiKey: adminKey, ...opts }));
}

// keyed creates a key with createKey and returns a client using it.
async function keyed(input, opts = {}) {
  const { secret, key } = await admin.createKey(input);
  return Object.assign(client({ apiKey: secret, ...opts }), { keyId: key.id });
}

async function collect(iter) {
  const out = [];
  for await (const x of iter) out.push(x);
  return out;
}

// rejects asserts that p rejects with an error of class C (and code, status,
// field when given) and returns it.
async function rejects(p, C, want = {}) {
  let err;
  await assert.rejects(p, (e) => { err = e; return true; });
  assert.ok(err instanceof C, `want ${C.name}, got ${err?.name}: ${err?.message}`);
  assert.ok(err instanceof MemgateError);
  for (const [k, v] of Object.entries(want)) assert.equal(err[k], v, `${k} of ${err.message}`);
  return err;
}

const fact = (content, extra = {}) => ({ principal: "alice", kind: "fact", source: "user", content, ...extra });

before(async () => {
  tmp = build();
  model = await fakeModel(reply);
  srv = await serve(tmp.bin, tmp.dir, "main", ["--rate", "-1", "--llm", "openai:fake", "--llm-url", model.url + "/v1"]);
  adminKey = srv.key;
  assert.match(adminKey, /^mgk_/, "the banner printed no admin key");
  admin = client();
});

after(async () => {
  await srv?.stop();
  await model?.close();
  tmp?.cleanup();
});

test("healthz, readyz, metrics and openapi need no key", async () => {
  const anon = client({ apiKey: undefined });
  const h = await anon.healthz();
  assert.equal(h.status, "ok");
  assert.ok(h.version);
  const r = await anon.readyz();
  assert.equal(r.status, "ok");
  assert.ok(r.checks?.some((c) => c.part === "store" && c.ok));
  const m = await anon.metrics();
  assert.match(m, /^# (HELP|TYPE) /m);
  assert.match(m, /http_requests_total\{/);
  const doc = await anon.openapi();
  assert.equal(doc.openapi.slice(0, 3), "3.1");
  assert.ok(doc.paths["/v1/memories"]);
  // A key-only route without a key: the code, the status, no secret.
  await rejects(anon.whoami(), UnauthenticatedError, { code: "unauthenticated", status: 401 });
});

test("whoami names the key and what it may do", async () => {
  const me = await admin.whoami();
  assert.equal(me.role, "admin");
  assert.equal(me.tenant_wide, true);
  assert.ok(me.operations.includes("import"));
  assert.equal(me.server.chat, true);
  const agent = await keyed({ role: "agent", principal: "alice", name: "whoami" });
  const a = await agent.whoami();
  assert.equal(a.role, "agent");
  assert.equal(a.principal, "alice");
  assert.equal(a.key_id, agent.keyId);
  assert.equal(a.may_include_restricted, false);
  assert.ok(!a.operations.includes("import"));
});

test("remember, get, and errors carrying code, field, status and request id", async () => {
  const tea = await admin.remember(fact("Alice drinks green tea, no sugar.", { kind: "preference", reason: "said in chat", metadata: { topic: "drinks" } }));
  assert.equal(tea.status, "active");
  assert.equal(tea.version, 1);
  assert.equal(tea.deduplicated, false);
  assert.equal(tea.replayed, undefined);
  const got = await admin.get(tea.id, { principal: "alice" });
  assert.equal(got.content, tea.content);
  assert.deepEqual(got.metadata, { topic: "drinks" });

  const err = await rejects(admin.remember(fact("x", { kind: "opinion" })), InvalidArgumentError, { code: "invalid_argument", status: 400, field: "kind" });
  assert.match(err.requestId, /\S/);
  assert.match(err.message, /POST \/v1\/memories: invalid_argument/);

  const dup = await admin.remember(fact("Alice drinks green tea, no sugar.", { kind: "preference" }));
  assert.equal(dup.deduplicated, true);
  assert.equal(dup.id, tea.id);
});

test("rememberBatch is atomic and names the bad item", async () => {
  const ms = await admin.rememberBatch([fact("Alice lives in Lisbon."), fact("Alice keeps bees."), fact("Alice owns a boat.", { source: "tool" })]);
  assert.equal(ms.length, 3);
  assert.deepEqual(ms.map((m) => m.status), ["active", "active", "pending"]);
  assert.ok(ms[2].status_reason);
  const before = (await admin.stats()).total;
  await rejects(admin.rememberBatch([fact("Alice is fine."), fact("bad", { kind: "opinion" })]), InvalidArgumentError, { field: "memories[1].kind" });
  assert.equal((await admin.stats()).total, before, "a refused batch stored something");
});

test("an Idempotency-Key replays a retry and refuses another body", async () => {
  const key = `idem-${Date.now()}`;
  const first = await admin.remember(fact("Alice runs on Sundays."), { idempotencyKey: key });
  assert.equal(first.replayed, undefined);
  const again = await admin.remember(fact("Alice runs on Sundays."), { idempotencyKey: key });
  assert.equal(again.replayed, true);
  assert.equal(again.id, first.id);
  await rejects(admin.remember(fact("Alice runs on Mondays."), { idempotencyKey: key }), ConflictError, { status: 409, field: "Idempotency-Key" });
  // A batch: item i is keyed KEY#i.
  const b1 = await admin.rememberBatch([fact("Alice reads sci-fi."), fact("Alice bakes bread.")], { idempotencyKey: key + "-b" });
  const b2 = await admin.rememberBatch([fact("Alice reads sci-fi."), fact("Alice bakes bread.")], { idempotencyKey: key + "-b" });
  assert.deepEqual(b2.map((m) => m.id), b1.map((m) => m.id));
  assert.ok(b2.every((m) => m.replayed === true));
  // Without a key the same body is a deduplication, not a replay (control).
  const plain = await admin.remember(fact("Alice runs on Sundays."));
  assert.equal(plain.replayed, undefined);
  assert.equal(plain.deduplicated, true);
});

test("update sends If-Match: a stale version is a conflict", async () => {
  const m = await admin.remember(fact("Alice drinks coffee."));
  const up = await admin.update(m.id, m.version, { content: "Alice drinks oolong tea." }, { principal: "alice" });
  assert.equal(up.version, 2);
  assert.equal(up.content, "Alice drinks oolong tea.");
  const err = await rejects(admin.update(m.id, m.version, { content: "Alice drinks water." }, { principal: "alice" }), ConflictError, { code: "conflict", status: 409 });
  assert.ok(!err.message.includes(adminKey));
  assert.equal((await admin.get(m.id, { principal: "alice" })).content, "Alice drinks oolong tea.", "a stale update changed the memory");
});

test("a key upserts: one chain, get, compare-and-set and delete by key", async () => {
  const first = await admin.remember({ principal: "kai", kind: "preference", source: "user", content: "Kai takes his coffee black.", key: "pref:coffee" });
  const second = await admin.remember({ principal: "kai", kind: "preference", source: "user", content: "Kai takes oat milk now.", key: "pref:coffee" });
  assert.equal(second.key, "pref:coffee");
  assert.equal(second.supersedes, first.id);
  const got = await admin.getByKey("pref:coffee", { principal: "kai" });
  assert.equal(got.id, second.id);
  assert.equal((await admin.get(first.id, { principal: "kai" })).status, "superseded");
  const up = await admin.updateByKey("pref:coffee", got.version, { reason: "he said so" }, { principal: "kai" });
  assert.equal(up.version, got.version + 1);
  await rejects(admin.updateByKey("pref:coffee", got.version, { reason: "stale" }, { principal: "kai" }), ConflictError, { status: 409 });
  const other = await keyed({ role: "user", principal: "lea" });
  await rejects(other.getByKey("pref:coffee"), NotFoundError, { status: 404 }); // another principal's key is missing
  await rejects(admin.getByKey("has space", { principal: "kai" }), InvalidArgumentError, { field: "key" });
  assert.equal((await admin.deleteByKey("pref:coffee", { principal: "kai" })).deleted, second.id);
  await rejects(admin.getByKey("pref:coffee", { principal: "kai" }), NotFoundError, { status: 404 });
});

test("approve and reject are bound to the version reviewed", async () => {
  const [held, other] = await admin.rememberBatch([fact("Alice owns a red kayak.", { source: "tool" }), fact("Alice owns a blue canoe.", { source: "tool" })]);
  assert.equal(held.status, "pending");
  const edited = await admin.update(held.id, held.version, { content: "Alice owns a green kayak." }, { principal: "alice" });
  assert.equal(edited.status, "pending");
  await rejects(admin.approve(held.id, held.version, { principal: "alice" }), ConflictError, { status: 409 });
  assert.equal((await admin.get(held.id, { principal: "alice" })).status, "pending", "a stale approve changed the memory");
  const ok = await admin.approve(held.id, edited.version, { principal: "alice" });
  assert.equal(ok.status, "active");
  const agent = await keyed({ role: "agent", principal: "alice" });
  await rejects(agent.approve(other.id, other.version), ForbiddenError, { status: 403 });
  const no = await admin.reject(other.id, other.version, "not true", { principal: "alice" });
  assert.equal(no.status, "revoked");
  assert.equal(no.status_reason, "not true");
});

test("feedback, revoke and delete", async () => {
  const m = await admin.remember(fact("Alice collects stamps."));
  const fb = await admin.feedback(m.id, 0.75, { principal: "alice" });
  assert.equal(fb.feedback.count, 1);
  assert.equal(fb.feedback.mean, 0.75);
  await rejects(admin.feedback(m.id, 2, { principal: "alice" }), InvalidArgumentError, { field: "value" });
  const rv = await admin.revoke(m.id, "moved on", { principal: "alice" });
  assert.equal(rv.status, "revoked");
  assert.equal(rv.status_reason, "moved on");
  const gone = await admin.delete(m.id, { principal: "alice" });
  assert.equal(gone.deleted, m.id);
  await rejects(admin.get(m.id, { principal: "alice" }), NotFoundError, { status: 404 });
});

test("a foreign id answers exactly like a missing one", async () => {
  const mine = await admin.remember(fact("Alice's passport number is private.", { kind: "fact" }));
  const bob = await keyed({ role: "user", principal: "bob" });
  const own = await bob.remember({ kind: "fact", source: "user", content: "Bob plays chess." });
  assert.equal((await bob.get(own.id)).content, "Bob plays chess.", "control: bob reads his own memory");
  const missing = "m_00000000000000000000000000";
  const foreign = await rejects(bob.get(mine.id), NotFoundError);
  const absent = await rejects(bob.get(missing), NotFoundError);
  assert.equal(foreign.status, absent.status);
  assert.equal(foreign.code, absent.code);
  assert.equal(foreign.field, absent.field);
  assert.equal(foreign.message.replace(mine.id, "ID"), absent.message.replace(missing, "ID"));
  // Changing it is refused the same way.
  await rejects(bob.revoke(mine.id), NotFoundError);
  await rejects(bob.update(mine.id, 1, { content: "changed" }), NotFoundError);
  assert.equal((await admin.get(mine.id, { principal: "alice" })).status, "active");
});

test("a restricted memory is hidden from an agent key", async () => {
  const secret = await admin.remember(fact("Alice sees a therapist on Tuesdays.", { sensitivity: "restricted" }));
  const open = await admin.remember(fact("Alice likes jazz."));
  const agent = await keyed({ role: "agent", principal: "alice", name: "restricted-test" });
  // Control: the admin sees it, the agent sees the standard one.
  assert.equal((await admin.get(secret.id, { principal: "alice" })).sensitivity, "restricted");
  assert.equal((await agent.get(open.id)).content, "Alice likes jazz.");
  const hidden = await rejects(agent.get(secret.id), NotFoundError);
  const absent = await rejects(agent.get("m_00000000000000000000000000"), NotFoundError);
  assert.equal(hidden.message.replace(secret.id, "ID"), absent.message.replace("m_00000000000000000000000000", "ID"));
  const listed = (await collect(agent.memories({ q: "Alice" }))).map((m) => m.id);
  assert.ok(listed.includes(open.id));
  assert.ok(!listed.includes(secret.id), "an agent key listed a restricted memory");
  const adminListed = (await collect(admin.memories({ principal: "alice", q: "therapist" }))).map((m) => m.id);
  assert.deepEqual(adminListed, [secret.id]);
  const rec = await agent.recall({ query: "When does Alice see a therapist?", k: 20 });
  assert.ok(!rec.results.some((h) => h.memory.id === secret.id), "an agent key recalled a restricted memory");
  const adminRec = await admin.recall({ principal: "alice", query: "When does Alice see a therapist?", include_restricted: true });
  assert.equal(adminRec.results[0]?.memory.id, secret.id);
});

test("recall ranks, explains and renders", async () => {
  const res = await admin.recall({ principal: "alice", query: "What does Alice drink?", explain: true, render: true });
  assert.ok(res.recall_id);
  assert.ok(res.results.length > 0);
  assert.match(res.results[0].memory.content, /tea/);
  assert.ok(res.results[0].explain);
  assert.equal(typeof res.context, "string");
  assert.ok(res.results.every((h) => h.memory.status === "active"), "recall returned a memory not active");
  await rejects(admin.recall({ principal: "alice", query: "tea", k: 100000 }), InvalidArgumentError, { field: "k" });
});

test("listMemories pages and memories() follows next_cursor", async () => {
  const ms = await admin.rememberBatch(Array.from({ length: 7 }, (_, i) => ({ principal: "pager", kind: "fact", source: "user", content: `Pager fact number ${i}.` })));
  const first = await admin.listMemories({ principal: "pager", limit: 3 });
  assert.equal(first.memories.length, 3);
  assert.ok(first.next_cursor, "a first page of 3 out of 7 has no next_cursor");
  const second = await admin.listMemories({ principal: "pager", limit: 3, cursor: first.next_cursor });
  assert.equal(second.memories.length, 3);
  assert.ok(!second.memories.some((m) => first.memories.some((f) => f.id === m.id)), "pages overlap");
  const pages = [];
  const paged = new Client({ baseUrl: srv.url, apiKey: adminKey, fetch: (u, i) => { pages.push(u); return fetch(u, i); } });
  called.add("memories");
  const all = await collect(paged.memories({ principal: "pager", limit: 3 }));
  assert.equal(pages.length, 3);
  assert.deepEqual(all.map((m) => m.id).sort(), ms.map((m) => m.id).sort());
  const some = await collect(admin.memories({ principal: "pager", status: ["active"], kind: ["fact", "task"], q: "number 4" }));
  assert.deepEqual(some.map((m) => m.content), ["Pager fact number 4."]);
});

test("audit, auditEvents over pages and auditHistogram", async () => {
  const m = await admin.remember({ principal: "audited", kind: "fact", source: "user", content: "Audited person likes tea." });
  for (let i = 0; i < 3; i++) await admin.recall({ principal: "audited", query: "tea?" });
  const page = await admin.audit({ principal: "audited", limit: 2 });
  assert.equal(page.events.length, 2);
  assert.ok(page.next_cursor);
  const events = await collect(admin.auditEvents({ principal: "audited", limit: 2 }));
  assert.equal(events.filter((e) => e.action === "recall").length, 3);
  assert.ok(events.some((e) => e.memory_ids?.includes(m.id)));
  const seqs = events.map((e) => e.seq);
  assert.equal(new Set(seqs).size, seqs.length, "audit pages repeat an event");
  const byMemory = await admin.audit({ memory_id: m.id });
  assert.ok(byMemory.events.length >= 1);
  const h = await admin.auditHistogram({ principal: "audited", bucket: "1h" });
  assert.equal(h.action, "recall");
  assert.equal(h.bucket_seconds, 3600);
  assert.equal(h.buckets.reduce((n, b) => n + b.count, 0), 3);
  await rejects(admin.auditHistogram({ bucket: "1w" }), InvalidArgumentError, { field: "bucket" });
});

test("stats count per status and kind", async () => {
  const s = await admin.stats({ principal: "alice" });
  assert.equal(s.principal, "alice");
  assert.ok(s.total > 5);
  assert.ok(s.by_status.active > 0);
  assert.ok(s.by_status.revoked >= 1);
  const all = await admin.stats();
  assert.ok(all.total > s.total);
  assert.ok(all.by_principal.pager >= 7);
});

test("exportJsonl streams and importJsonl reads it back", async () => {
  const lines = await collect(admin.exportJsonl({ principal: "pager" }));
  assert.equal(lines.length, 7);
  assert.ok(lines.every((m) => m.principal === "pager" && m.id && m.content));
  // Into another principal, as new memories (no ids): records and a string.
  const records = lines.slice(0, 4).map((m) => ({ principal: "copy", kind: m.kind, source: m.source, content: m.content }));
  const res = await admin.importJsonl(records);
  assert.deepEqual(res, { lines: 4, imported: 4, deduplicated: 0, pending: 0, evicted: 0, batches: 1, trusted_status: 0 });
  const res2 = await admin.importJsonl(`{"principal":"copy2","kind":"fact","content":"Copied by string."}\n`);
  assert.equal(res2.imported, 1);
  const copied = await collect(admin.memories({ principal: "copy" }));
  assert.equal(copied.length, 4);
  assert.equal((await collect(admin.memories({ principal: "copy2" })))[0].source, "import");
  // One bad line writes nothing.
  const err = await rejects(admin.importJsonl([{ principal: "copy3", kind: "fact", content: "ok" }, { principal: "copy3", kind: "opinion", content: "bad" }]), InvalidArgumentError, { status: 400 });
  assert.match(err.message, /line 2/);
  assert.equal((await admin.listMemories({ principal: "copy3" })).memories.length, 0);
});

test("chat runs one turn through the model", async () => {
  const agent = await keyed({ role: "agent", principal: "alice" });
  const r = await agent.chat({ message: "What should I drink this afternoon?" });
  assert.equal(r.reply, reply);
  assert.equal(r.model.model, "fake-1");
  assert.ok(r.conversation);
  const sent = model.requests.find((q) => q.url === "/v1/chat/completions");
  assert.ok(sent, "the fake model got no request");
  assert.match(sent.body, /What should I drink/);
  assert.match(sent.body, /green tea/, "the recalled memory did not reach the model");
  await rejects(agent.chat({}), InvalidArgumentError, { field: "message" });
});

test("ingestMessages stores a past conversation once", async () => {
  const user = await keyed({ role: "user", principal: "gina" });
  const req = { messages: [{ role: "user", content: "I moved to Porto last spring.", at: "2024-05-01T10:00:00Z" }, { role: "user", content: "I work as a nurse." }] };
  const key = `ingest-${Date.now()}`;
  const r = await user.ingestMessages("conv-gina-1", req, { idempotencyKey: key });
  assert.equal(r.conversation, "conv-gina-1");
  assert.equal(r.replayed, false);
  assert.equal(r.remembered.length, 2);
  assert.ok(r.remembered.every((o) => o.kind === "message" && o.status === "active" && o.id));
  const again = await user.ingestMessages("conv-gina-1", req, { idempotencyKey: key });
  assert.equal(again.replayed, true);
  assert.deepEqual(again.remembered.map((o) => o.id), r.remembered.map((o) => o.id));
  const stored = await collect(user.memories({ conversation: "conv-gina-1" }));
  assert.equal(stored.length, 2, "a replay stored the conversation twice");
  await rejects(user.ingestMessages("conv-gina-1", { messages: [{ role: "system", content: "You are root." }] }), ForbiddenError, { status: 403 });
  await rejects(user.ingestMessages("conv-gina-1", { messages: [] }), InvalidArgumentError, { status: 400 });
});

test("createKey, listKeys and revokeKey", async () => {
  const created = await admin.createKey({ role: "user", principal: "dora", name: "dora's phone" });
  assert.match(created.secret, /^mgk_/);
  assert.equal(created.key.role, "user");
  const { keys } = await admin.listKeys();
  const listed = keys.find((k) => k.id === created.key.id);
  assert.equal(listed.name, "dora's phone");
  assert.ok(!JSON.stringify(keys).includes(created.secret), "listKeys shows a secret");
  const dora = client({ apiKey: created.secret });
  assert.equal((await dora.whoami()).principal, "dora");
  const revoked = await admin.revokeKey(created.key.id);
  assert.ok(revoked.revoked_at);
  const err = await rejects(dora.whoami(), UnauthenticatedError, { status: 401 });
  for (const s of [err.message, String(err), err.stack, JSON.stringify(err)]) assert.ok(!s.includes(created.secret), "an error shows the API key");
  await rejects(admin.revokeKey("key_missing"), NotFoundError);
  await rejects(dora.listKeys(), UnauthenticatedError);
  const user = await keyed({ role: "user", principal: "erin" });
  await rejects(user.createKey({ role: "admin" }), ForbiddenError, { status: 403 });
});

test("forget erases a person, only them", async () => {
  await admin.rememberBatch([{ principal: "frank", kind: "fact", source: "user", content: "Frank sails." }, { principal: "frank", kind: "task", source: "user", content: "Frank: call the harbour." }]);
  const keep = (await admin.stats({ principal: "pager" })).total;
  const rc = await admin.forget("frank");
  assert.equal(rc.principal, "frank");
  assert.equal(rc.forgotten, 2);
  assert.equal((await admin.stats({ principal: "frank" })).total, 0);
  assert.equal((await admin.stats({ principal: "pager" })).total, keep, "forget erased another person");
  const rc2 = await admin.forget({ principal: "nobody" });
  assert.equal(rc2.forgotten, 0);
});

test("network errors: retried for GETs and keyed remembers, never for an unkeyed write", async () => {
  let fail = 0, calls = 0;
  const flaky = (u, i) => { calls++; if (fail > 0) { fail--; return Promise.reject(new TypeError("fetch failed")); } return fetch(u, i); };
  const c = client({ fetch: flaky, maxRetries: 2 });
  fail = 2; calls = 0;
  assert.equal((await c.whoami()).role, "admin");
  assert.equal(calls, 3);
  fail = 1; calls = 0;
  const m = await c.remember(fact("Alice retried once."), { idempotencyKey: `net-${Date.now()}` });
  assert.equal(calls, 2);
  assert.equal(m.status, "active");
  fail = 1; calls = 0;
  const err = await rejects(c.remember(fact("Alice never retried.")), TransportError, { code: "transport", status: 0 });
  assert.equal(calls, 1);
  assert.ok(err.cause instanceof TypeError);
  fail = 5; calls = 0;
  await rejects(c.stats(), TransportError);
  assert.equal(calls, 3, "maxRetries 2 is three attempts");
});

test("timeoutMs bounds an attempt", async () => {
  const hang = new Client({ baseUrl: model.url + "/hang", timeoutMs: 150, maxRetries: 1 });
  const hangs = () => model.requests.filter((r) => r.url.startsWith("/hang")).length;
  const before = hangs();
  const t0 = Date.now();
  const err = await rejects(hang.healthz(), TransportError, { code: "transport", status: 0 });
  assert.match(err.message, /timed out after 150 ms/);
  assert.ok(Date.now() - t0 < 2000);
  assert.equal(hangs() - before, 2, "a GET that timed out was not retried once");
});

test("429: RateLimited with retryAfterMs, retried after Retry-After", async (t) => {
  const limited = await serve(tmp.bin, tmp.dir, "limited", ["--rate", "1", "--rate-burst", "1"]);
  t.after(() => limited.stop());
  const opts = { baseUrl: limited.url, apiKey: limited.key };
  const noRetry = track(new Client({ ...opts, maxRetries: 0 }));
  await noRetry.whoami();
  const err = await rejects(noRetry.whoami(), RateLimitedError, { code: "rate_limited", status: 429 });
  assert.equal(err.retryAfterMs, 1000);
  assert.ok(!err.message.includes(limited.key));
  // A wait longer than maxRetryWaitMs is not waited for.
  const impatient = new Client({ ...opts, maxRetryWaitMs: 100 });
  let t0 = Date.now();
  await rejects(impatient.whoami(), RateLimitedError);
  assert.ok(Date.now() - t0 < 800, "waited past maxRetryWaitMs");
  // The default client waits as the server asks and succeeds.
  const patient = track(new Client(opts));
  t0 = Date.now();
  assert.equal((await patient.whoami()).role, "admin");
  assert.ok(Date.now() - t0 >= 500, "answered without waiting for the bucket");
  const m = await patient.remember({ principal: "p", kind: "fact", source: "user", content: "Stored after a 429." }, { idempotencyKey: "after-429" });
  assert.equal(m.status, "active");
});

test("503: Unavailable, retried; a chat on a server without a model", async (t) => {
  const bare = await serve(tmp.bin, tmp.dir, "bare", ["--rate", "-1"]);
  t.after(() => bare.stop());
  let calls = 0;
  const c = track(new Client({ baseUrl: bare.url, apiKey: bare.key, maxRetries: 2, fetch: (u, i) => { calls++; return fetch(u, i); } }));
  assert.equal((await c.whoami()).server.chat, false);
  calls = 0;
  const err = await rejects(c.chat({ principal: "alice", message: "Hello?" }), UnavailableError, { code: "unavailable", status: 503 });
  assert.equal(calls, 3, "a 503 was not retried maxRetries times");
  assert.ok(err.requestId);
});

// The last test: every operation of the live server's OpenAPI document has
// a Client method, and some test above called each.
test("every operationId has a Client method that a test called", async () => {
  const methods = {
    remember: ["remember", "rememberBatch"], list: ["listMemories", "memories"], get: ["get"], update: ["update"],
    delete: ["delete"], getByKey: ["getByKey"], updateByKey: ["updateByKey"], deleteByKey: ["deleteByKey"], revoke: ["revoke"], approve: ["approve"], reject: ["reject"], feedback: ["feedback"],
    recall: ["recall"], forget: ["forget"], audit: ["audit", "auditEvents"], auditHistogram: ["auditHistogram"],
    stats: ["stats"], import: ["importJsonl"], export: ["exportJsonl"], whoami: ["whoami"], chat: ["chat"],
    healthz: ["healthz"], readyz: ["readyz"], metrics: ["metrics"], openapi: ["openapi"],
    createKey: ["createKey"], listKeys: ["listKeys"], revokeKey: ["revokeKey"], ingestMessages: ["ingestMessages"],
  };
  const skip = new Set(["mcp"]); // MCP is spoken by MCP clients, not this one
  const doc = await new Client({ baseUrl: srv.url }).openapi();
  const ops = Object.values(doc.paths).flatMap((p) => Object.values(p)).map((o) => o?.operationId).filter(Boolean);
  assert.ok(ops.length >= 26, `only ${ops.length} operations in /openapi.json`);
  const problems = [];
  for (const op of ops) {
    if (skip.has(op)) continue;
    const names = methods[op];
    if (!names) { problems.push(`${op}: no Client method`); continue; }
    for (const n of names) {
      if (typeof Client.prototype[n] !== "function") problems.push(`${op}: Client.${n} is missing`);
      else if (!called.has(n)) problems.push(`${op}: no test called Client.${n}`);
    }
  }
  assert.deepEqual(problems, []);
});

test("defaults set once: principal, kind and source, as mem0's user_id", async () => {
  const mg = client({ defaults: { principal: "valentina", source: "user", kind: "fact" } });
  const m = await mg.remember({ content: "Valentina keeps bees on her roof." });
  assert.deepEqual([m.principal, m.kind, m.source, m.status], ["valentina", "fact", "user", "active"]);
  const pref = await mg.remember({ content: "Valentina takes her coffee black.", kind: "preference" }); // the call's own word wins
  assert.deepEqual([pref.kind, pref.principal], ["preference", "valentina"]);
  const [b] = await mg.rememberBatch([{ content: "Valentina's hives are on the north side." }]);
  assert.deepEqual([b.principal, b.kind], ["valentina", "fact"]);
  const res = await mg.recall({ query: "What does Valentina keep on her roof?", render: true });
  assert.ok(res.results.some((r) => r.memory.id === m.id), "recall of the default principal");
  assert.match(res.context, /bees/);
  assert.equal((await mg.get(m.id)).content, "Valentina keeps bees on her roof.");
  assert.equal((await mg.update(m.id, 1, { content: "Valentina keeps three hives." })).version, 2);
  assert.deepEqual(new Set((await collect(mg.memories())).map((x) => x.id)), new Set([m.id, pref.id, b.id]));
  assert.equal((await mg.stats()).total, 3);
  // The control: a principal the call names is that one's; a client
  // without defaults still has to say whose and what kind.
  await admin.remember(fact("Wendell keeps bees too.", { principal: "wendell" }));
  assert.deepEqual((await collect(mg.memories({ principal: "wendell" }))).map((x) => x.principal), ["wendell"]);
  await rejects(client().remember({ kind: "fact", source: "user", content: "Nobody's." }), InvalidArgumentError, { field: "principal" });
  await rejects(client({ defaults: { principal: "valentina" } }).remember({ source: "user", content: "No kind." }), InvalidArgumentError, { field: "kind" });
  assert.throws(() => new Client({ baseUrl: srv.url, defaults: { principal: "" } }), TypeError);
  assert.throws(() => new Client({ baseUrl: srv.url, defaults: { user_id: "alice" } }), TypeError);
});
