// @memgate/client is a client of memgate's HTTP API (governed long-term
// memory for AI agents). It speaks only through fetch: no runtime
// dependency, no Node-only API, so it runs in Node 20+, Deno, Bun, workers
// and browsers. It must never put the API key anywhere but the
// Authorization header: not in an error, a message or a log.
//
// The types come from src/schema.d.ts, generated from httpapi/openapi.json
// by openapi-typescript; a test fails when the two drift apart.

import type { components, operations } from "./schema.js";

type Schemas = components["schemas"];
type Query<Op extends keyof operations> = NonNullable<operations[Op]["parameters"]["query"]>;
type Ok<Op extends keyof operations, S extends number = 200> =
  operations[Op]["responses"] extends { [K in S]: { content: { "application/json": infer T } } } ? T : never;

export type Memory = Schemas["Memory"];
export type Remembered = Schemas["Remembered"];
export type MemoryInput = Schemas["MemoryInput"];
/** What remember takes: a MemoryInput whose kind and source may come from ClientOptions.defaults. */
export type RememberInput = Omit<MemoryInput, "kind" | "source"> & Partial<Pick<MemoryInput, "kind" | "source">>;
export type RecallRequest = Schemas["RecallRequest"];
export type RecallResult = Schemas["RecallResult"];
export type RecallHit = Schemas["RecallHit"];
export type MemoryList = Schemas["MemoryList"];
export type Patch = Schemas["Patch"];
export type ForgetBody = Schemas["ForgetBody"];
export type ForgetReceipt = Schemas["ForgetReceipt"];
export type AuditEvent = Schemas["AuditEvent"];
export type AuditPage = Schemas["AuditPage"];
export type AuditHistogram = Schemas["AuditHistogram"];
export type Stats = Schemas["Stats"];
export type ImportResult = Schemas["ImportResult"];
export type Whoami = Schemas["Whoami"];
export type ChatRequest = Schemas["ChatRequest"];
export type ChatResult = Schemas["ChatResult"];
export type IngestRequest = Schemas["IngestRequest"];
export type IngestResult = Schemas["IngestResult"];
export type Key = Schemas["Key"];
export type KeyInput = Schemas["KeyInput"];
export type CreatedKey = Schemas["CreatedKey"];
export type KeyList = Schemas["KeyList"];
export type Health = Schemas["Health"];
/** The codes the server answers with, and "transport" when no usable response came. */
export type ErrorCode = Schemas["Error"]["error"]["code"] | "transport";
export type Deleted = Ok<"delete">;

export type ListQuery = Query<"list">;
export type AuditQuery = Query<"audit">;
export type HistogramQuery = Query<"auditHistogram">;
export type StatsQuery = Query<"stats">;
export type ExportQuery = Query<"export">;
/** Whose memory a call by id means: a key bound to no principal (an admin's) names it here. */
export type Scope = Query<"get">;

export type { components, operations, paths } from "./schema.js";

/** Defaults of ClientOptions. */
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RETRIES = 3;
export const DEFAULT_MAX_RETRY_WAIT_MS = 20_000;

export interface ClientOptions {
  /** The server's URL, e.g. http://127.0.0.1:7070 (a path prefix is kept). */
  baseUrl: string;
  /** Sent as "Authorization: Bearer KEY"; /healthz, /readyz, /metrics and /openapi.json need none. */
  apiKey?: string;
  /** Time limit of one attempt, until its whole response is read (export: until its headers). */
  timeoutMs?: number;
  /** Retries after a 429 or a 503, and after a network error for GETs and keyed remembers. */
  maxRetries?: number;
  /** The longest wait before a retry; a Retry-After asking for more is returned as the error instead. */
  maxRetryWaitMs?: number;
  fetch?: typeof fetch;
  /**
   * Set once, as mem0's user_id is: principal and agent apply to every memory
   * call that names none (never to keys, import or forget, which name whom
   * they act on), kind and source to every remember.
   */
  defaults?: Defaults;
}

/** ClientOptions.defaults. */
export interface Defaults {
  principal?: string;
  agent?: string;
  kind?: MemoryInput["kind"];
  source?: MemoryInput["source"];
}

// The calls a default principal or agent applies to.
const PRINCIPAL_PATHS = ["/v1/memories", "/v1/recall", "/v1/chat", "/v1/conversations/", "/v1/stats", "/v1/audit", "/v1/export"];
const AGENT_PATHS = ["/v1/memories", "/v1/recall", "/v1/chat", "/v1/conversations/", "/v1/stats"];

export interface RememberOptions {
  /**
   * Makes a retry safe: the same key with the same body stores nothing twice
   * (the replay answers with "replayed": true). With a key, network errors
   * are retried too.
   */
  idempotencyKey?: string;
  tenant?: string;
}

/**
 * An error answered by memgate ({"error":{"code","message","field"}}), or
 * a TransportError when no usable response came. Narrow on `code` or on
 * the subclass.
 */
export class MemgateError extends Error {
  readonly code: ErrorCode;
  /** The HTTP status; 0 for a TransportError. */
  readonly status: number;
  /** The field, header or parameter the error is about, if any. */
  readonly field?: string;
  /** The server's X-Request-Id, to find the call in its logs. */
  readonly requestId?: string;

  constructor(code: ErrorCode, message: string, init: { status: number; field?: string; requestId?: string; cause?: unknown }) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = init.status;
    if (init.field) this.field = init.field;
    if (init.requestId) this.requestId = init.requestId;
  }
}
export class InvalidArgumentError extends MemgateError {}
export class UnauthenticatedError extends MemgateError {}
export class ForbiddenError extends MemgateError {}
/** A missing id, or one outside the key's scope: the two are indistinguishable by design. */
export class NotFoundError extends MemgateError {}
export class MethodNotAllowedError extends MemgateError {}
/** A stale If-Match version, or an Idempotency-Key reused with another body. */
export class ConflictError extends MemgateError {}
export class TooLargeError extends MemgateError {}
export class PolicyViolationError extends MemgateError {}
export class RateLimitedError extends MemgateError {
  /** How long the server asked to wait (Retry-After), if it said. */
  readonly retryAfterMs?: number;
  constructor(code: ErrorCode, message: string, init: ConstructorParameters<typeof MemgateError>[2] & { retryAfterMs?: number }) {
    super(code, message, init);
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
  }
}
export class UnavailableError extends MemgateError {
  readonly retryAfterMs?: number;
  constructor(code: ErrorCode, message: string, init: ConstructorParameters<typeof MemgateError>[2] & { retryAfterMs?: number }) {
    super(code, message, init);
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
  }
}
export class InternalError extends MemgateError {}
/**
 * No usable response: the connection failed, timed out or was cut (status
 * 0, code "transport", the cause in `cause`). A call that is not safe to
 * repeat is never retried after one: it may have been carried out.
 */
export class TransportError extends MemgateError {}

const errorClasses: Record<ErrorCode, typeof MemgateError> = {
  invalid_argument: InvalidArgumentError,
  unauthenticated: UnauthenticatedError,
  forbidden: ForbiddenError,
  not_found: NotFoundError,
  method_not_allowed: MethodNotAllowedError,
  conflict: ConflictError,
  too_large: TooLargeError,
  policy_violation: PolicyViolationError,
  rate_limited: RateLimitedError,
  unavailable: UnavailableError,
  internal: InternalError,
  transport: TransportError,
};

// The code of a response without an API error body (a proxy's page).
const codeOfStatus: Record<number, ErrorCode> = {
  400: "invalid_argument", 401: "unauthenticated", 403: "forbidden", 404: "not_found",
  405: "method_not_allowed", 409: "conflict", 412: "conflict", 413: "too_large",
  422: "policy_violation", 429: "rate_limited", 502: "unavailable", 503: "unavailable", 504: "unavailable",
};

function makeError(code: ErrorCode, message: string, init: { status: number; field?: string; requestId?: string; retryAfterMs?: number; cause?: unknown }): MemgateError {
  const Class = errorClasses[code] ?? MemgateError;
  return new Class(code, message, init);
}

interface Request {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, unknown>;
  body?: unknown; // JSON-encoded
  raw?: { body: string; type: string };
  headers?: Record<string, string>;
  /** Safe to send again after a network error: a GET, or a POST with an Idempotency-Key. */
  idempotent: boolean;
  /** Answered without an API key. */
  public?: boolean;
}

/**
 * A memgate client. Safe for concurrent use: it holds no state across
 * calls but its options. Every method rejects with a MemgateError.
 */
export class Client {
  readonly #base: string;
  readonly #key: string | undefined;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #maxRetryWaitMs: number;
  readonly #fetch: typeof fetch;
  readonly #defaults: Defaults;

  constructor(opts: ClientOptions) {
    if (!opts?.baseUrl) throw new TypeError("memgate: baseUrl is required");
    this.#base = opts.baseUrl.replace(/\/+$/, "");
    this.#key = opts.apiKey;
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxRetries = Math.max(0, opts.maxRetries ?? DEFAULT_MAX_RETRIES);
    this.#maxRetryWaitMs = opts.maxRetryWaitMs ?? DEFAULT_MAX_RETRY_WAIT_MS;
    this.#fetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
    const d = opts.defaults ?? {};
    for (const [name, v] of Object.entries(d)) {
      if (!["principal", "agent", "kind", "source"].includes(name)) throw new TypeError(`memgate: defaults.${name} is not a default`);
      if (v !== undefined && (typeof v !== "string" || v === "")) throw new TypeError(`memgate: defaults.${name} must be a non-empty string`);
    }
    this.#defaults = { ...d };
  }

  // --- memories

  /** Stores one memory (POST /v1/memories): its status says whether the write gate held it pending. */
  async remember(memory: RememberInput, opts: RememberOptions = {}): Promise<Remembered> {
    const [m] = await this.#remember({ ...memory, ...(opts.tenant ? { tenant: opts.tenant } : {}) }, opts);
    return m!;
  }

  /** Stores up to 500 memories atomically: all or none. With a key, item i is keyed KEY#i. */
  rememberBatch(memories: RememberInput[], opts: RememberOptions = {}): Promise<Remembered[]> {
    return this.#remember({ memories, ...(opts.tenant ? { tenant: opts.tenant } : {}) }, opts);
  }

  async #remember(body: Record<string, unknown>, opts: RememberOptions): Promise<Remembered[]> {
    const d = this.#defaults;
    const fill = (m: Record<string, unknown>) => {
      const out = { ...m };
      for (const name of ["kind", "source", "principal", "agent"] as const) {
        if (d[name] !== undefined && out[name] == null) out[name] = d[name];
      }
      return out;
    };
    body = Array.isArray(body.memories) ? { ...body, memories: body.memories.map(fill) } : fill(body);
    const headers: Record<string, string> = opts.idempotencyKey ? { "Idempotency-Key": opts.idempotencyKey } : {};
    const out = await this.#json<Ok<"remember", 201>>({ method: "POST", path: "/v1/memories", body, headers, idempotent: !!opts.idempotencyKey });
    return out.memories;
  }

  /** One page of memories (GET /v1/memories); next_cursor, when set, asks for the next. */
  listMemories(query: ListQuery = {}): Promise<MemoryList> {
    return this.#json({ method: "GET", path: "/v1/memories", query, idempotent: true });
  }

  /** Every memory the query matches, page after page. */
  async *memories(query: ListQuery = {}): AsyncGenerator<Memory, void, undefined> {
    yield* this.#pages((cursor) => this.listMemories({ ...query, ...cursor }), (p) => p.memories);
  }

  /** A memory by id; a foreign id rejects with NotFoundError exactly like a missing one. */
  get(id: string, scope: Scope = {}): Promise<Memory> {
    return this.#json({ method: "GET", path: idPath(id), query: scope, idempotent: true });
  }

  /** Changes a memory if it is still at `version` (If-Match); a stale version is a ConflictError. */
  update(id: string, version: number, patch: Patch, scope: Scope = {}): Promise<Memory> {
    return this.#json({ method: "PATCH", path: idPath(id), query: scope, body: patch, headers: ifMatch(version), idempotent: false });
  }

  /** Deletes a memory for good. */
  delete(id: string, scope: Scope = {}): Promise<Deleted> {
    return this.#json({ method: "DELETE", path: idPath(id), query: scope, idempotent: false });
  }

  /**
   * The active memory with `key` (MemoryInput.key) at exactly the level of
   * `scope`: its principal, agent and conversation. None there, or one the
   * API key may not read, rejects with NotFoundError.
   */
  getByKey(key: string, scope: Scope = {}): Promise<Memory> {
    return this.#json({ method: "GET", path: "/v1/memories/by-key", query: { ...scope, key }, idempotent: true });
  }

  /** `update` of the memory `key` names, compare-and-set on `version`: one changed or superseded since is a ConflictError. */
  updateByKey(key: string, version: number, patch: Patch, scope: Scope = {}): Promise<Memory> {
    return this.#json({ method: "PATCH", path: "/v1/memories/by-key", query: { ...scope, key }, body: patch, headers: ifMatch(version), idempotent: false });
  }

  /** Deletes for good the memory `key` names; the versions it superseded stay. */
  deleteByKey(key: string, scope: Scope = {}): Promise<Deleted> {
    return this.#json({ method: "DELETE", path: "/v1/memories/by-key", query: { ...scope, key }, idempotent: false });
  }

  /** Revokes a memory: it is never recalled again. */
  revoke(id: string, reason?: string, scope: Scope = {}): Promise<Memory> {
    return this.#json({ method: "POST", path: idPath(id, "revoke"), query: scope, body: reason === undefined ? {} : { reason }, idempotent: false });
  }

  /** Makes a pending memory active, at the version reviewed (an edit since is a ConflictError). Admin keys. */
  approve(id: string, version: number, scope: Scope = {}): Promise<Memory> {
    return this.#json({ method: "POST", path: idPath(id, "approve"), query: scope, body: {}, headers: ifMatch(version), idempotent: false });
  }

  /** Refuses a pending memory at the version reviewed. Admin keys. */
  reject(id: string, version: number, reason?: string, scope: Scope = {}): Promise<Memory> {
    return this.#json({ method: "POST", path: idPath(id, "reject"), query: scope, body: reason === undefined ? {} : { reason }, headers: ifMatch(version), idempotent: false });
  }

  /** Records how useful a memory was, from -1 to 1. */
  feedback(id: string, value: number, scope: Scope = {}): Promise<Memory> {
    return this.#json({ method: "POST", path: idPath(id, "feedback"), query: scope, body: { value }, idempotent: false });
  }

  // --- recall and people

  recall(req: RecallRequest): Promise<RecallResult> {
    return this.#json({ method: "POST", path: "/v1/recall", body: req, idempotent: false });
  }

  /** Erases everything about a person; a string is the principal. */
  forget(body: ForgetBody | string = {}): Promise<ForgetReceipt> {
    return this.#json({ method: "POST", path: "/v1/forget", body: typeof body === "string" ? { principal: body } : body, idempotent: false });
  }

  /** One page of audit events, newest first. */
  audit(query: AuditQuery = {}): Promise<AuditPage> {
    return this.#json({ method: "GET", path: "/v1/audit", query, idempotent: true });
  }

  /** Every audit event the query matches, page after page. */
  async *auditEvents(query: AuditQuery = {}): AsyncGenerator<AuditEvent, void, undefined> {
    yield* this.#pages((cursor) => this.audit({ ...query, ...cursor }), (p) => p.events);
  }

  auditHistogram(query: HistogramQuery = {}): Promise<AuditHistogram> {
    return this.#json({ method: "GET", path: "/v1/audit/histogram", query, idempotent: true });
  }

  stats(query: StatsQuery = {}): Promise<Stats> {
    return this.#json({ method: "GET", path: "/v1/stats", query, idempotent: true });
  }

  // --- transfer

  /**
   * Imports memories in the format of export: a JSONL string, or records
   * serialised one a line. Every line is validated before anything is
   * written. Not retried after a network error (it may have landed).
   */
  importJsonl(lines: string | Iterable<object>, opts: { tenant?: string } = {}): Promise<ImportResult> {
    const body = typeof lines === "string" ? lines : Array.from(lines, (l) => JSON.stringify(l) + "\n").join("");
    return this.#json({ method: "POST", path: "/v1/import", query: opts, raw: { body, type: "application/x-ndjson" }, idempotent: false });
  }

  /** Streams the scope's memories, oldest first, one parsed JSONL line at a time. */
  async *exportJsonl(query: ExportQuery = {}): AsyncGenerator<Memory, void, undefined> {
    const { res, done } = await this.#send({ method: "GET", path: "/v1/export", query, idempotent: true }, true);
    try {
      if (!res.body) return;
      const decoder = new TextDecoder();
      let buf = "";
      const reader = res.body.getReader();
      try {
        for (;;) {
          const { value, done: end } = await reader.read();
          buf += end ? decoder.decode() : decoder.decode(value, { stream: true });
          let nl: number;
          while ((nl = buf.indexOf("\n")) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (line) yield JSON.parse(line) as Memory;
          }
          if (end) break;
        }
      } finally {
        reader.releaseLock();
      }
      if (buf.trim()) yield JSON.parse(buf) as Memory;
    } finally {
      done();
      await res.body?.cancel().catch(() => {});
    }
  }

  /**
   * Stores a conversation the application already had: each message a
   * message memory through the write gate (what it refuses is an outcome in
   * `remembered`, not an error). With a key, a retry stores nothing twice
   * (replayed: true) and network errors are retried too.
   */
  ingestMessages(conversation: string, req: IngestRequest, opts: { idempotencyKey?: string } = {}): Promise<IngestResult> {
    const headers: Record<string, string> = opts.idempotencyKey ? { "Idempotency-Key": opts.idempotencyKey } : {};
    return this.#json({ method: "POST", path: `/v1/conversations/${encodeURIComponent(conversation)}/messages`, body: req, headers, idempotent: !!opts.idempotencyKey });
  }

  // --- keys and identity

  /** What the key is: its role, binding, operations and sources, and what the server offers. */
  whoami(): Promise<Whoami> {
    return this.#json({ method: "GET", path: "/v1/whoami", idempotent: true });
  }

  /** One turn of the agent middleware; UnavailableError on a server without a chat model. */
  chat(req: ChatRequest): Promise<ChatResult> {
    return this.#json({ method: "POST", path: "/v1/chat", body: req, idempotent: false });
  }

  /** Creates an API key; its secret is in the answer this once. Admin keys. */
  createKey(input: KeyInput): Promise<CreatedKey> {
    return this.#json({ method: "POST", path: "/v1/keys", body: input, idempotent: false });
  }

  listKeys(): Promise<KeyList> {
    return this.#json({ method: "GET", path: "/v1/keys", idempotent: true });
  }

  /** Revokes a key; another tenant's key id is a NotFoundError like a missing one. */
  revokeKey(id: string): Promise<Key> {
    return this.#json({ method: "POST", path: `/v1/keys/${encodeURIComponent(id)}/revoke`, idempotent: false });
  }

  // --- operations (no key needed)

  healthz(): Promise<Health> {
    return this.#json({ method: "GET", path: "/healthz", idempotent: true, public: true });
  }

  /**
   * Readiness. A server that is not ready answers 503 with the failing
   * checks; that is returned (status "unavailable"), not thrown or retried.
   */
  async readyz(): Promise<Health> {
    const { res, done } = await this.#send({ method: "GET", path: "/readyz", idempotent: true, public: true }, false, [503]);
    try {
      return (await res.json()) as Health;
    } finally {
      done();
    }
  }

  /** The Prometheus text exposition. */
  async metrics(): Promise<string> {
    const { res, done } = await this.#send({ method: "GET", path: "/metrics", idempotent: true, public: true });
    try {
      return await res.text();
    } finally {
      done();
    }
  }

  /** The server's OpenAPI 3.1 document. */
  openapi(): Promise<Record<string, unknown>> {
    return this.#json({ method: "GET", path: "/openapi.json", idempotent: true, public: true });
  }

  // --- transport

  async *#pages<P extends { next_cursor?: string }, T>(page: (c: { cursor?: string }) => Promise<P>, items: (p: P) => T[]): AsyncGenerator<T, void, undefined> {
    let cursor: string | undefined;
    do {
      const p = await page(cursor ? { cursor } : {});
      yield* items(p);
      cursor = p.next_cursor;
    } while (cursor);
  }

  async #json<T>(r: Request): Promise<T> {
    const { res, done } = await this.#send(r);
    try {
      return (await res.json()) as T;
    } catch (err) {
      throw transportError(r, err);
    } finally {
      done();
    }
  }

  /**
   * Sends r until it gets a 2xx (or a status in `accept`), retrying 429 and
   * 503 (and network errors when r is idempotent) up to maxRetries times.
   * The caller reads the body, then calls done() to stop the attempt's timer;
   * with `stream`, the timer stops as soon as the headers are in.
   */
  /**
   * r with the default principal and agent added where the call names none:
   * in the query of a call that has one or no body (calls by id scope by
   * query), else in the body. Remember fills its own, per item.
   */
  #scoped(r: Request): Request {
    if (r.method === "POST" && r.path === "/v1/memories") return r;
    const add: [string, string][] = [];
    const d = this.#defaults;
    if (d.principal !== undefined && PRINCIPAL_PATHS.some((p) => r.path.startsWith(p))) add.push(["principal", d.principal]);
    if (d.agent !== undefined && AGENT_PATHS.some((p) => r.path.startsWith(p))) add.push(["agent", d.agent]);
    if (add.length === 0) return r;
    if (r.query === undefined && r.body !== undefined && typeof r.body === "object" && r.body !== null) {
      const body = { ...(r.body as Record<string, unknown>) };
      for (const [k, v] of add) if (body[k] == null) body[k] = v;
      return { ...r, body };
    }
    const query = { ...(r.query ?? {}) };
    for (const [k, v] of add) if (query[k] == null) query[k] = v;
    return { ...r, query };
  }

  async #send(r: Request, stream = false, accept: number[] = []): Promise<{ res: Response; done: () => void }> {
    r = this.#scoped(r);
    const url = this.#base + r.path + queryString(r.query);
    const headers: Record<string, string> = { Accept: "application/json", ...r.headers };
    if (this.#key && !r.public) headers["Authorization"] = `Bearer ${this.#key}`;
    let body: string | undefined;
    if (r.raw) {
      body = r.raw.body;
      headers["Content-Type"] = r.raw.type;
    } else if (r.body !== undefined) {
      body = JSON.stringify(r.body);
      headers["Content-Type"] = "application/json";
    }
    for (let attempt = 0; ; attempt++) {
      const ctrl = new AbortController();
      const timer = setTimeout(() => ctrl.abort(new Error(`timed out after ${this.#timeoutMs} ms`)), this.#timeoutMs);
      const done = () => clearTimeout(timer);
      let res: Response;
      try {
        res = await this.#fetch(url, { method: r.method, headers, body, signal: ctrl.signal, redirect: "error" });
      } catch (err) {
        done();
        const e = transportError(r, ctrl.signal.aborted ? ctrl.signal.reason : err);
        const wait = backoff(attempt);
        if (r.idempotent && attempt < this.#maxRetries && wait <= this.#maxRetryWaitMs) {
          await sleep(wait);
          continue;
        }
        throw e;
      }
      if (res.ok || accept.includes(res.status)) {
        if (stream) done();
        return { res, done };
      }
      let err: MemgateError;
      try {
        err = await decodeError(r, res);
      } finally {
        done();
      }
      if ((res.status === 429 || res.status === 503) && attempt < this.#maxRetries) {
        const wait = retryAfterMs(res.headers.get("Retry-After")) ?? backoff(attempt);
        if (wait <= this.#maxRetryWaitMs) {
          await sleep(wait);
          continue;
        }
      }
      throw err;
    }
  }
}

function idPath(id: string, action?: string): string {
  return `/v1/memories/${encodeURIComponent(id)}` + (action ? `/${action}` : "");
}

function ifMatch(version: number): Record<string, string> {
  return { "If-Match": `"${version}"` };
}

// queryString encodes a query object: arrays as repeated parameters,
// undefined, null and empty strings left out.
function queryString(q: Record<string, unknown> | undefined): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q ?? {})) {
    for (const x of Array.isArray(v) ? v : [v]) {
      if (x === undefined || x === null || x === "") continue;
      p.append(k, x instanceof Date ? x.toISOString() : String(x));
    }
  }
  const s = p.toString();
  return s ? "?" + s : "";
}

async function decodeError(r: Request, res: Response): Promise<MemgateError> {
  const requestId = res.headers.get("X-Request-Id") ?? undefined;
  const wait = retryAfterMs(res.headers.get("Retry-After"));
  let code: ErrorCode = codeOfStatus[res.status] ?? (res.status >= 500 ? "internal" : "invalid_argument");
  let message = `HTTP ${res.status}`;
  let field: string | undefined;
  try {
    const b = (await res.json()) as Partial<Schemas["Error"]>;
    if (b?.error?.code) {
      code = b.error.code;
      message = b.error.message ?? message;
      field = b.error.field;
    }
  } catch {
    // not an API error body (a proxy's page): the status decides
  }
  return makeError(code, `memgate: ${r.method} ${r.path}: ${code}: ${message}`, {
    status: res.status, field, requestId, ...(wait === undefined ? {} : { retryAfterMs: wait }),
  });
}

function transportError(r: Request, cause: unknown): MemgateError {
  const why = cause instanceof Error ? cause.message : String(cause);
  return makeError("transport", `memgate: ${r.method} ${r.path}: no usable response: ${why}`, { status: 0, cause });
}

// retryAfterMs reads Retry-After: delay-seconds or an HTTP date.
function retryAfterMs(h: string | null): number | undefined {
  if (!h) return undefined;
  if (/^\s*\d+\s*$/.test(h)) return Number(h) * 1000;
  const t = Date.parse(h);
  return Number.isNaN(t) ? undefined : Math.max(0, t - Date.now());
}

// backoff is the wait before retry n (from 0) when the server names none:
// 100 ms doubling, with up to 50% jitter.
function backoff(n: number): number {
  const base = 100 * 2 ** n;
  return base + Math.floor(Math.random() * base * 0.5);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
