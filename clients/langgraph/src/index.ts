// @memgate/langgraph is a LangGraph.js store (BaseStore from
// @langchain/langgraph-checkpoint) kept in memgate, so an agent's
// long-term memory goes through memgate's write gate, scope and audit log.
//
// Namespace mapping (see README.md): a namespace is memgate's scope,
//   [principal]                        principal-wide memories
//   [principal, agent]                 one agent's memories of the principal
//   [principal, agent, conversation]   one conversation's
//   [principal, "~", conversation]     a conversation's, stored with no agent
// Deeper namespaces, or labels memgate refuses as ids, are an
// InvalidNamespaceError. The tenant is the API key's.
//
// Items: an item is one memory whose metadata holds {"lg_key": key,
// "lg_value": value}; its content is a readable text "key: text" (the key
// keeps two keys with the same value from folding into one memory by
// dedup). A put on an existing key supersedes the memory of the store's
// source holding it (another source's is left as it is); delete revokes
// the store's own; a key is found by listing the scope (narrowed by the
// content's "key:" text) and matching lg_key exactly. memgate's own keyed
// memories (Memory.key) name only an active memory, and a put the write
// gate holds (an assistant's fact, by default) must read back at once
// (includePending), so this store keeps its keys in metadata: two puts of
// one key at the same instant can both supersede the same memory, which
// keyed memories would not allow.
//
// Foreign = missing: a namespace the API key may not reach reads exactly
// like an empty one (get: null, search and listNamespaces: [], delete: a
// no-op), as memgate answers a foreign id like a missing one. A put there is
// refused (the ForbiddenError is rethrown).

import {
  BaseStore,
  InvalidNamespaceError,
  getTextAtPath,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from "@langchain/langgraph-checkpoint";
import { Client, ForbiddenError, NotFoundError, type ClientOptions, type Memory, type MemoryInput, type Whoami } from "@memgate/client";

type Kind = Memory["kind"];
type Source = Memory["source"];

const KINDS: readonly Kind[] = ["message", "fact", "preference", "task", "summary"];
const ID = /^[A-Za-z0-9._:@-]{1,128}$/;
/** The agent label of a namespace naming a conversation stored with no agent. */
export const NO_AGENT = "~";
/** The fields a forbidden-on-scope answer names: what makes a namespace foreign. */
const SCOPE_FIELDS = new Set(["tenant", "principal", "agent", "conversation"]);
const PAGE = 500;

export interface MemgateStoreOptions {
  /** A @memgate/client Client, or the options to make one. */
  client: Client | ClientOptions;
  /** The source puts claim: one the key may claim (GET /v1/whoami). Default "assistant". */
  source?: Source;
  /** The kind of a put whose value has no valid `kind`. Default "fact". */
  kind?: Kind;
  /**
   * Whether get and search without a query return memories the write gate
   * holds pending (default true: a put reads back at once). Search with a
   * query is memgate's recall, which never returns pending memories.
   */
  includePending?: boolean;
  /** Recall's floor for search with a query (memgate's default when unset; 0 turns it off). */
  minScore?: number;
}

/** memgate's scope of a namespace. */
export interface Scope {
  principal: string;
  agent?: string;
  conversation?: string;
}

/** An item with the memory behind it. */
export interface MemgateItem extends SearchItem {
  memgate: { id: string; status: Memory["status"]; kind: Kind; source: Source };
}

/**
 * Maps a namespace to memgate's scope, or throws InvalidNamespaceError.
 * With `prefix`, a shorter (even empty) namespace is allowed: a search or
 * list prefix.
 */
export function scopeOf(namespace: string[], prefix = false): Partial<Scope> {
  if (!Array.isArray(namespace)) throw new InvalidNamespaceError("memgate: a namespace is an array of labels");
  if (namespace.length > 3) {
    throw new InvalidNamespaceError(`memgate: namespace ${JSON.stringify(namespace)} is deeper than [principal, agent, conversation]`);
  }
  if (namespace.length === 0 && !prefix) throw new InvalidNamespaceError("memgate: a namespace names at least the principal");
  namespace.forEach((label, i) => {
    if (i === 1 && label === NO_AGENT && (namespace.length === 3 || prefix)) return;
    if (typeof label !== "string" || !ID.test(label)) {
      throw new InvalidNamespaceError(`memgate: namespace label ${JSON.stringify(label)} is not a memgate id (${ID.source})` +
        (i === 1 && label === NO_AGENT ? `; "${NO_AGENT}" stands for no agent only before a conversation` : ""));
    }
  });
  const [principal, agent, conversation] = namespace;
  const s: Partial<Scope> = {};
  if (principal !== undefined) s.principal = principal;
  if (agent !== undefined && agent !== NO_AGENT) s.agent = agent;
  if (conversation !== undefined) s.conversation = conversation;
  return s;
}

/** The namespace of a memory's scope. */
export function namespaceOf(m: Pick<Memory, "principal" | "agent" | "conversation">): string[] {
  if (m.conversation) return [m.principal, m.agent || NO_AGENT, m.conversation];
  return m.agent ? [m.principal, m.agent] : [m.principal];
}

function sameNamespace(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function hasPrefix(ns: string[], prefix: string[]): boolean {
  return prefix.length <= ns.length && prefix.every((x, i) => x === ns[i]);
}

/** A memgate error saying the key may not reach the scope asked for, or that the memory is not there. */
function isForeign(err: unknown): boolean {
  if (err instanceof NotFoundError) return true;
  return err instanceof ForbiddenError && err.field !== undefined && SCOPE_FIELDS.has(err.field);
}

function lgKey(m: Memory): string | undefined {
  const k = (m.metadata as Record<string, unknown> | undefined)?.lg_key;
  return typeof k === "string" ? k : undefined;
}

// compareValues is the filter semantics of LangGraph's InMemoryStore:
// equality, or the operators $eq $ne $gt $gte $lt $lte $in $nin.
const OPS = new Set(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"]);
function compareValues(v: unknown, f: unknown): boolean {
  if (typeof f === "object" && f !== null && Object.keys(f).every((k) => OPS.has(k))) {
    return Object.entries(f as Record<string, unknown>).every(([op, x]) => {
      switch (op) {
        case "$eq": return v === x;
        case "$ne": return v !== x;
        case "$gt": return Number(v) > Number(x);
        case "$gte": return Number(v) >= Number(x);
        case "$lt": return Number(v) < Number(x);
        case "$lte": return Number(v) <= Number(x);
        case "$in": return Array.isArray(x) ? x.includes(v) : false;
        case "$nin": return Array.isArray(x) ? !x.includes(v) : true;
        default: return false;
      }
    });
  }
  return v === f;
}

function matches(value: Record<string, unknown>, filter: Record<string, unknown> | undefined): boolean {
  return !filter || Object.entries(filter).every(([k, f]) => compareValues(value[k], f));
}

function matchesCondition(ns: string[], c: MatchCondition): boolean {
  if (c.path.length > ns.length) return false;
  const off = c.matchType === "suffix" ? ns.length - c.path.length : 0;
  return c.path.every((p, i) => p === "*" || p === ns[off + i]);
}

/** The readable text of a value: its content or text if a string, else the fields indexed, else its JSON. */
export function textOf(value: Record<string, unknown>, index?: false | string[]): string {
  if (Array.isArray(index) && index.length) {
    const parts = index.flatMap((p) => getTextAtPath(value, p));
    if (parts.length) return parts.join("\n");
  }
  if (typeof value.content === "string" && value.content.trim()) return value.content;
  if (typeof value.text === "string" && value.text.trim()) return value.text;
  return JSON.stringify(value);
}

/**
 * A LangGraph BaseStore kept in memgate. Every operation of a batch runs in
 * order, one after the other, through the client's API key.
 */
export class MemgateStore extends BaseStore {
  readonly client: Client;
  readonly #source: Source;
  readonly #kind: Kind;
  readonly #pending: boolean;
  readonly #minScore: number | undefined;
  #whoami: Promise<Whoami> | undefined;

  constructor(opts: MemgateStoreOptions) {
    super();
    this.client = opts.client instanceof Client ? opts.client : new Client(opts.client);
    this.#source = opts.source ?? "assistant";
    this.#kind = opts.kind ?? "fact";
    if (!KINDS.includes(this.#kind)) throw new TypeError(`memgate: kind ${JSON.stringify(this.#kind)} is not one of ${KINDS.join(", ")}`);
    this.#pending = opts.includePending ?? true;
    this.#minScore = opts.minScore;
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const out: unknown[] = [];
    for (const op of operations) {
      if ("key" in op && "value" in op) out.push(await this.#put(op as PutOperation));
      else if ("key" in op) out.push(await this.#get(op as GetOperation));
      else if ("namespacePrefix" in op) out.push(await this.#search(op as SearchOperation));
      else if ("limit" in op || "matchConditions" in op || "offset" in op) out.push(await this.#listNamespaces(op as ListNamespacesOperation));
      else throw new TypeError(`memgate: unknown store operation ${JSON.stringify(op)}`);
    }
    return out as OperationResults<Op>;
  }

  // --- items

  /** The memories (newest first) holding key in exactly namespace: active, and pending when asked. */
  async #find(namespace: string[], key: string, pending: boolean): Promise<Memory[]> {
    const scope = scopeOf(namespace);
    const found: Memory[] = [];
    try {
      for await (const m of this.client.memories({ ...scope, status: pending ? ["active", "pending"] : ["active"], q: `${key}:`, limit: PAGE })) {
        if (lgKey(m) === key && sameNamespace(namespaceOf(m), namespace)) found.push(m);
      }
    } catch (err) {
      if (isForeign(err)) return [];
      throw err;
    }
    return found.sort((a, b) => b.created_at.localeCompare(a.created_at));
  }

  #item(m: Memory, score?: number): MemgateItem {
    const v = (m.metadata as Record<string, unknown> | undefined)?.lg_value;
    const item: MemgateItem = {
      namespace: namespaceOf(m),
      key: lgKey(m)!,
      value: typeof v === "object" && v !== null ? (v as Record<string, any>) : {},
      createdAt: new Date(m.created_at),
      updatedAt: new Date(m.updated_at),
      memgate: { id: m.id, status: m.status, kind: m.kind, source: m.source },
    };
    if (score !== undefined) item.score = score;
    return item;
  }

  async #get(op: GetOperation): Promise<Item | null> {
    const [m] = await this.#find(op.namespace, op.key, this.#pending);
    return m ? this.#item(m) : null;
  }

  async #put(op: PutOperation): Promise<void> {
    const scope = scopeOf(op.namespace) as Scope;
    // Only the store's own source's memories are its to replace or delete:
    // memgate keeps each source's keyed memories apart and lets a key
    // supersede (and an agent key revoke) only a source it may claim, so
    // a value another writer (the person) put under the key stays as it
    // is, and this put is a memory of its own beside it.
    const current = (await this.#find(op.namespace, op.key, true)).filter((m) => m.source === this.#source);
    if (op.value === null) {
      for (const m of current) await this.#revoke(m, "deleted through the LangGraph store");
      return;
    }
    if (typeof op.value !== "object" || Array.isArray(op.value)) throw new TypeError("memgate: a store value is an object");
    await this.#checkAgent(scope);
    const kind = KINDS.includes(op.value.kind) ? (op.value.kind as Kind) : this.#kind;
    const content = `${op.key}: ${textOf(op.value, op.index)}`;
    const valueJSON = JSON.stringify(op.value);
    const same = (m: Memory) => m.content === content && m.kind === kind && JSON.stringify((m.metadata as any)?.lg_value) === valueJSON;
    if (current[0] && same(current[0])) return; // already the value: nothing to write
    // A pending memory cannot be superseded: the newer put replaces it.
    for (const m of current.filter((m) => m.status === "pending")) await this.#revoke(m, "replaced by a newer put");
    const active = current.find((m) => m.status === "active");
    if (active && same(active)) return;
    await this.client.remember({
      ...scope, kind, source: this.#source, content,
      metadata: { lg_key: op.key, lg_value: op.value } as unknown as MemoryInput["metadata"],
      ...(active ? { supersedes: active.id } : {}),
    });
  }

  async #revoke(m: Memory, reason: string): Promise<void> {
    try {
      await this.client.revoke(m.id, reason, { principal: m.principal });
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err; // gone meanwhile
    }
  }

  // An agent-bound key would store a put into a namespace without an agent
  // in its own agent (memgate's default): refuse instead of writing it
  // somewhere the namespace does not say.
  async #checkAgent(scope: Scope): Promise<void> {
    if (scope.agent) return;
    this.#whoami ??= this.client.whoami();
    let me: Whoami;
    try {
      me = await this.#whoami;
    } catch (err) {
      this.#whoami = undefined;
      throw err;
    }
    if (me.agent) {
      throw new ForbiddenError("forbidden", `memgate: namespace [${scope.principal}] has no agent but the API key is bound to agent ${me.agent}: put into [${scope.principal}, ${me.agent}]`, { status: 403, field: "agent" });
    }
  }

  // --- search

  async #search(op: SearchOperation): Promise<SearchItem[]> {
    const prefix = op.namespacePrefix;
    const scope = scopeOf(prefix, true);
    const limit = op.limit ?? 10, offset = op.offset ?? 0;
    const want = offset + limit;
    const out: SearchItem[] = [];
    const seen = new Set<string>();
    const take = (m: Memory, score?: number) => {
      const key = lgKey(m);
      if (key === undefined) return;
      const ns = namespaceOf(m);
      if (!hasPrefix(ns, prefix)) return;
      const id = JSON.stringify([ns, key]);
      if (seen.has(id)) return; // an older memory of the same item
      seen.add(id);
      const item = this.#item(m, score);
      if (matches(item.value, op.filter)) out.push(item);
    };
    try {
      if (op.query) {
        // Recall ranks; its k caps at 100 and counts memories this store did not write.
        const r = await this.client.recall({
          ...scope, query: op.query, k: Math.min(100, Math.max(want * 2, 10)),
          ...(this.#minScore === undefined ? {} : { min_score: this.#minScore }),
        });
        for (const h of r.results) take(h.memory, h.score);
      } else {
        for await (const m of this.client.memories({ ...scope, status: this.#pending ? ["active", "pending"] : ["active"], limit: PAGE })) {
          take(m);
          if (out.length >= want) break;
        }
      }
    } catch (err) {
      if (isForeign(err)) return [];
      throw err;
    }
    return out.slice(offset, want);
  }

  async #listNamespaces(op: ListNamespacesOperation): Promise<string[][]> {
    // The scope to list: the principal (and agent) a prefix condition names.
    const prefix = op.matchConditions?.find((c) => c.matchType === "prefix")?.path ?? [];
    const concrete: string[] = [];
    for (const p of prefix) {
      if (p === "*") break;
      concrete.push(p);
    }
    const scope = scopeOf(concrete.slice(0, 2), true);
    const found = new Map<string, string[]>();
    try {
      for await (const m of this.client.memories({ ...scope, status: this.#pending ? ["active", "pending"] : ["active"], limit: PAGE })) {
        if (lgKey(m) === undefined) continue;
        let ns = namespaceOf(m);
        if (!(op.matchConditions ?? []).every((c) => matchesCondition(ns, c))) continue;
        if (op.maxDepth !== undefined) ns = ns.slice(0, op.maxDepth);
        found.set(JSON.stringify(ns), ns);
      }
    } catch (err) {
      if (isForeign(err)) return [];
      throw err;
    }
    const all = [...found.values()].sort((a, b) => a.join("\u0000").localeCompare(b.join("\u0000")));
    const offset = op.offset ?? 0;
    return all.slice(offset, op.limit === undefined ? undefined : offset + op.limit);
  }
}
