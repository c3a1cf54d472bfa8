// @memgate/ai-sdk: memgate's remember and recall as Vercel AI SDK tools.
//
// The application binds the tools to one connection (principal, agent,
// conversation, source) when it creates them; the model only says what to
// remember or what to look for. Nothing in a tool's input can name whose
// memory is written or read, or claim a source: the input schemas allow no
// other field, the validation refuses any, and execute reads only the
// fields it knows. memgate's write gate still decides what a write becomes
// (a fact from the assistant waits as pending until a person approves it).
//
// A memgate error is returned as the tool's result ({error: {code,
// message}}), so the model can read it and go on; the API key is never in
// it (the client keeps it to the Authorization header).

import { jsonSchema, tool } from "ai";
import { MemgateError } from "@memgate/client";

export const KINDS = Object.freeze(["fact", "preference", "task", "summary", "message"]);
export const SOURCES = Object.freeze(["user", "assistant", "tool", "verified_tool", "system", "import"]);
export const DEFAULT_SOURCE = "assistant";
export const DEFAULT_K = 5;
export const MAX_K = 20;
export const NO_MEMORIES = "no memories";

const MAX_TEXT = 8192; // memgate's limit on content, reason and query, in bytes

/**
 * The remember and recall tools of one connection, for
 * generateText({ tools: memgateTools(client, { principal: "alice" }) }).
 */
export function memgateTools(client, opts = {}) {
  if (!client || typeof client.remember !== "function" || typeof client.recall !== "function") {
    throw new TypeError("memgateTools: client must be a @memgate/client Client");
  }
  const scope = connectionScope(opts);
  const source = opts.source ?? DEFAULT_SOURCE;
  if (!SOURCES.includes(source)) throw new TypeError(`memgateTools: source must be one of ${SOURCES.join(", ")}`);
  const maxK = opts.maxK ?? MAX_K;
  const defaultK = Math.min(opts.k ?? DEFAULT_K, maxK);
  if (!isInt(maxK, 1, 100) || !isInt(defaultK, 1, maxK)) throw new TypeError("memgateTools: k and maxK must be integers from 1 to 100, k at most maxK");
  const minScore = opts.minScore;
  const callOpts = opts.tenant ? { tenant: opts.tenant } : {};

  const remember = tool({
    description: opts.rememberDescription ??
      "Store something worth remembering about the user for later conversations: a fact, a preference, a task, a summary or a message. " +
      "Facts and preferences may be held for a person's approval before they can be recalled.",
    inputSchema: jsonSchema(rememberSchema, { validate: validator(rememberSchema) }),
    execute: async (input) => {
      const { content, kind, reason } = input; // only these: never whose memory or its source
      try {
        const m = await client.remember({
          ...scope, kind, source, content, ...(reason === undefined ? {} : { reason }),
        }, callOpts);
        return { id: m.id, status: m.status, deduplicated: m.deduplicated };
      } catch (err) {
        return errorResult(err);
      }
    },
  });

  const recall = tool({
    description: opts.recallDescription ??
      "Look up what is remembered about the user that is relevant to a query. Returns a <memories> block and the memories found, or \"no memories\".",
    inputSchema: jsonSchema(recallSchema(maxK), { validate: validator(recallSchema(maxK)) }),
    execute: async (input) => {
      const { query, k } = input;
      try {
        const res = await client.recall({
          ...scope, ...callOpts, query, k: k ?? defaultK, render: true,
          ...(minScore === undefined ? {} : { min_score: minScore }),
        });
        const hits = res.results.map((h) => ({ id: h.memory.id, score: h.score, content: h.memory.content }));
        return { context: hits.length && res.context ? res.context : NO_MEMORIES, hits };
      } catch (err) {
        return errorResult(err);
      }
    },
  });

  return { remember, recall };
}

function connectionScope(opts) {
  if (typeof opts.principal !== "string" || opts.principal === "") {
    throw new TypeError("memgateTools: opts.principal is required (whose memory the tools read and write)");
  }
  const scope = { principal: opts.principal };
  for (const k of ["agent", "conversation"]) {
    if (opts[k] === undefined) continue;
    if (typeof opts[k] !== "string" || opts[k] === "") throw new TypeError(`memgateTools: opts.${k} must be a non-empty string`);
    scope[k] = opts[k];
  }
  return scope;
}

/** The result of a failed call: the REST error code and message, never the key. */
function errorResult(err) {
  if (err instanceof MemgateError) {
    return { error: { code: err.code, message: err.message, ...(err.field ? { field: err.field } : {}) } };
  }
  throw err; // not memgate's answer (a bug): the SDK reports it as a tool error
}

const rememberSchema = Object.freeze({
  type: "object",
  properties: {
    content: { type: "string", minLength: 1, maxLength: MAX_TEXT, description: "What to remember, as one self-contained statement." },
    kind: { type: "string", enum: KINDS, description: "fact, preference, task, summary or message." },
    reason: { type: "string", maxLength: MAX_TEXT, description: "Why it is worth remembering (optional)." },
  },
  required: ["content", "kind"],
  additionalProperties: false,
});

function recallSchema(maxK) {
  return {
    type: "object",
    properties: {
      query: { type: "string", minLength: 1, maxLength: MAX_TEXT, description: "What to look for." },
      k: { type: "integer", minimum: 1, maximum: maxK, description: `How many memories at most (default ${DEFAULT_K}).` },
    },
    required: ["query"],
    additionalProperties: false,
  };
}

// validator checks a value against one of the flat object schemas above:
// known properties only, their types, enums and bounds, the required ones.
function validator(schema) {
  return (value) => {
    const fail = (msg) => ({ success: false, error: new TypeError(`invalid tool input: ${msg}`) });
    if (value === null || typeof value !== "object" || Array.isArray(value)) return fail("not an object");
    for (const key of Object.keys(value)) {
      if (!Object.hasOwn(schema.properties, key)) return fail(`unknown field "${key}"`);
    }
    for (const key of schema.required) {
      if (value[key] === undefined) return fail(`missing field "${key}"`);
    }
    for (const [key, p] of Object.entries(schema.properties)) {
      const v = value[key];
      if (v === undefined) continue;
      if (p.type === "string") {
        if (typeof v !== "string") return fail(`"${key}" must be a string`);
        if (p.minLength && v.trim().length < p.minLength) return fail(`"${key}" is empty`);
        if (p.maxLength && new TextEncoder().encode(v).length > p.maxLength) return fail(`"${key}" is longer than ${p.maxLength} bytes`);
        if (p.enum && !p.enum.includes(v)) return fail(`"${key}" must be one of ${p.enum.join(", ")}`);
      } else if (p.type === "integer") {
        if (!isInt(v, p.minimum, p.maximum)) return fail(`"${key}" must be an integer from ${p.minimum} to ${p.maximum}`);
      }
    }
    return { success: true, value };
  };
}

function isInt(v, min, max) {
  return Number.isInteger(v) && v >= min && v <= max;
}
