package memgate

import (
	"context"
	"io"
)

// Memories is the memory operations, the one contract every surface is
// written against (REST, MCP, the CLI over a local database or a server,
// the agent middleware, the inspector's API). Three implementations:
//
//   - the engine (package engine): the gates, with no authorization, for a
//     trusted caller in the same process;
//   - the authorization guard (guard.Session): one API key's view, every
//     scope narrowed to what the key may reach, then the engine;
//   - the Go client (client.Client.Memories): a memgate server over HTTP,
//     whose guard decides for the client's key.
//
// Scopes name the tenant and principal an operation acts in (a key fixes
// what it may); a memory outside the scope is not_found, exactly like a
// missing one. Errors are *Error values where they concern the caller.
type Memories interface {
	// Remember stores one memory through the write gate; with Supersedes,
	// as the new version of another.
	Remember(ctx context.Context, r RememberRequest) (*Remembered, error)
	// RememberBatch stores memories atomically, all or none.
	RememberBatch(ctx context.Context, rs []RememberRequest) ([]*Remembered, error)
	// Recall returns what matters for a query, through the read gate.
	Recall(ctx context.Context, r RecallRequest) (*RecallResult, error)
	Get(ctx context.Context, s Scope, id string) (*Memory, error)
	// GetByKey returns the active memory with key (Memory.Key) at exactly
	// the level of s: its principal, agent and conversation.
	GetByKey(ctx context.Context, s Scope, key string) (*Memory, error)
	// List returns a page of memories, newest first.
	List(ctx context.Context, s Scope, f ListRequest) (*Page, error)
	// Update changes a memory at version (compare-and-set).
	Update(ctx context.Context, s Scope, id string, version int64, p Patch) (*Memory, error)
	Revoke(ctx context.Context, s Scope, id, reason string) (*Memory, error)
	// Approve and Reject decide a pending memory at the version reviewed.
	Approve(ctx context.Context, s Scope, id string, version int64) (*Memory, error)
	Reject(ctx context.Context, s Scope, id string, version int64, reason string) (*Memory, error)
	Feedback(ctx context.Context, s Scope, id string, value float64) (*Memory, error)
	Delete(ctx context.Context, s Scope, id string) error
	// Forget erases the principal of s, everywhere.
	Forget(ctx context.Context, s Scope) (*ForgetReceipt, error)
	Counts(ctx context.Context, s Scope) ([]Count, error)
	Audit(ctx context.Context, s Scope, f AuditFilter) (*AuditPage, error)
	AuditHistogram(ctx context.Context, s Scope, r AuditHistogramRequest) (*AuditHistogram, error)
	// Import stores a JSONL export; Export writes one and returns the
	// number of memories written.
	Import(ctx context.Context, r ImportRequest, jsonl io.Reader) (ImportResult, error)
	Export(ctx context.Context, s Scope, w io.Writer) (int, error)
}
