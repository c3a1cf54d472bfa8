import type { Tool } from "ai";
import type { Client, ErrorCode } from "@memgate/client";

export type MemoryKind = "fact" | "preference" | "task" | "summary" | "message";
export type MemorySource = "user" | "assistant" | "tool" | "verified_tool" | "system" | "import";

export declare const KINDS: readonly MemoryKind[];
export declare const SOURCES: readonly MemorySource[];
export declare const DEFAULT_SOURCE: "assistant";
export declare const DEFAULT_K: number;
export declare const MAX_K: number;
export declare const NO_MEMORIES: "no memories";

/** The connection the tools are bound to: set by the application, never by the model. */
export interface MemgateToolsOptions {
  /** Whose memory the tools write and read (required). */
  principal: string;
  agent?: string;
  /** Narrows recall to the conversation and files writes under it. */
  conversation?: string;
  tenant?: string;
  /** The source of what the model remembers (default "assistant"); it must be one the key may claim. */
  source?: MemorySource;
  /** Memories a recall returns when the model names no k (default 5). */
  k?: number;
  /** The largest k the model may ask for (default 20). */
  maxK?: number;
  /** Recall's score floor (the server's default when unset); 0 turns it off. */
  minScore?: number;
  rememberDescription?: string;
  recallDescription?: string;
}

export interface ToolError {
  error: { code: ErrorCode; message: string; field?: string };
}

export interface RememberInput {
  content: string;
  kind: MemoryKind;
  reason?: string;
}
export type RememberOutput = { id: string; status: string; deduplicated: boolean } | ToolError;

export interface RecallInput {
  query: string;
  k?: number;
}
export interface RecallHit {
  id: string;
  score: number;
  content: string;
}
/** context is the <memories> block, or "no memories" when nothing cleared the floor. */
export type RecallOutput = { context: string; hits: RecallHit[] } | ToolError;

export declare function memgateTools(
  client: Pick<Client, "remember" | "recall">,
  opts: MemgateToolsOptions,
): {
  remember: Tool<RememberInput, RememberOutput>;
  recall: Tool<RecallInput, RecallOutput>;
};
