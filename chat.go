package memgate

import "time"

// This file holds the chat turn's part of the callers' contract (see the
// package comment): what package agent returns for a turn.

// ChatResult is a turn's outcome: the reply with the receipts of what was
// recalled into the prompt and of what was remembered.
type ChatResult struct {
	Conversation string    `json:"conversation"`
	Reply        string    `json:"reply"`
	Model        ModelInfo `json:"model"`
	// Recall is the engine's recall for the message, with its explanation
	// and the rendered block (context) that was placed in the prompt.
	Recall *RecallResult `json:"recall"`
	// Remembered are the user's turn and the reply, in that order.
	Remembered []Outcome `json:"remembered"`
	// Extraction is set when extraction is on.
	Extraction *Extraction `json:"extraction,omitempty"`
}

// ModelInfo names the model that answered.
type ModelInfo struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// Outcome statuses besides the memory statuses (active, pending).
const (
	// OutcomeRefused: the write gate refused the memory (policy, size,
	// validation); Error says why, without quoting content.
	OutcomeRefused = "refused"
	// OutcomeFailed: the engine could not store it (store or embedder
	// unavailable, internal error).
	OutcomeFailed = "failed"
)

// Outcome is what became of one memory a chat turn asked to remember.
type Outcome struct {
	ID     string `json:"id,omitempty"`
	Kind   Kind   `json:"kind"`
	Source Source `json:"source"`
	// Status is the memory's (active, pending) or OutcomeRefused or
	// OutcomeFailed, with Error.
	Status       string `json:"status"`
	StatusReason string `json:"status_reason,omitempty"`
	Deduplicated bool   `json:"deduplicated"`
	// Supersedes is the memory this one replaces (at once when active,
	// on approval when pending).
	Supersedes string `json:"supersedes,omitempty"`
	// Content and Reason are set for extracted memories that were stored:
	// what the model proposed, as stored.
	Content string     `json:"content,omitempty"`
	Reason  string     `json:"reason,omitempty"`
	Error   *ErrorInfo `json:"error,omitempty"`
}

// ErrorInfo is an error as a caller is shown it: a code and a message that
// never carries content ("internal error" for anything without a code).
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// Extraction is what the extraction call proposed and what became of it.
type Extraction struct {
	// Proposed counts the items of the model's answer; Dropped those that
	// failed validation (or came after the agent's MaxCandidates);
	// Malformed is 1 when the answer was not a JSON object of the expected
	// shape, in which case nothing of it was stored.
	Proposed  int `json:"proposed"`
	Dropped   int `json:"dropped"`
	Malformed int `json:"malformed"`
	// Stored, Deduplicated and Refused count the valid candidates by what
	// the write gate did: stored anew (active or pending), folded into an
	// existing memory, refused or failed.
	Stored       int `json:"stored"`
	Deduplicated int `json:"deduplicated"`
	Refused      int `json:"refused"`
	// PendingIDs are the stored memories held for approval.
	PendingIDs []string  `json:"pending_ids"`
	Memories   []Outcome `json:"memories"`
	// Error is set when the extraction call itself failed; the turn did
	// not.
	Error *ErrorInfo `json:"error,omitempty"`
}

// IngestMessage is one turn of a conversation an application hands to
// POST /v1/conversations/{id}/messages: who said it (user, assistant,
// tool, system), what, and when (optional; kept as the memory's metadata
// "said_at").
type IngestMessage struct {
	Role    string     `json:"role"`
	Content string     `json:"content"`
	At      *time.Time `json:"at,omitempty"`
}

// IngestResult is what became of each ingested message, in order, and of
// the facts proposed from them (on a server whose agent extracts).
type IngestResult struct {
	Conversation string      `json:"conversation"`
	Remembered   []Outcome   `json:"remembered"`
	Extraction   *Extraction `json:"extraction,omitempty"`
	// Replayed is true when every message was stored by an earlier call
	// with the same idempotency key: this one stored nothing.
	Replayed bool `json:"replayed"`
}
