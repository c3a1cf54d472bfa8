package memgate

import "time"

// This file holds the requests of the callers' contract (see the package
// comment): what a caller asks the engine, the HTTP API or the Go client.

// RememberRequest is one memory to store. Memory carries the caller's fields
// (scope, kind, source, content, reason, metadata, times); the engine assigns
// id, status, created/updated times, version and content hash. TTL, when
// set, fixes expires_at relative to now and must not be combined with an
// explicit ExpiresAt; without either, the policy's default TTL for the kind
// applies. Supersedes, when set, makes this memory the new version of that
// one (same tenant and principal), atomically; when the write gate holds
// the memory as pending, it is stored with the link and the supersession
// happens when it is approved.
//
// IdempotencyKey, when set, makes a retry safe: a second request with the
// same key in the same partition (tenant, principal, agent, conversation)
// and the same fields stores nothing and returns the memory the first one
// stored, with Replayed set; the same key with other fields is a conflict
// naming "idempotency_key". Keys are kept for engine.Config.IdempotencyWindow.
// With Supersedes, the partition is the new memory's and Supersedes is one
// of the fields: a retry of a supersession that went through (its old
// memory now superseded) replays it instead of failing as a conflict, and
// so does a retry of one the write gate held, whether it still waits for
// approval or was approved since. A retry after the old memory was deleted
// is not_found, like any supersession of it.
//
// ExactAgent and HideRestricted narrow the memory Supersedes may name, as
// in Scope (package guard sets them from the key): a key bound to
// an agent supersedes only its agent's memories, an agent key never a
// restricted one it cannot read. With HideRestricted, a restricted memory
// is also never deduplicated into an existing one (whose id would tell
// the writer it exists).
type RememberRequest struct {
	Memory         Memory
	TTL            time.Duration
	Supersedes     string
	IdempotencyKey string
	ExactAgent     bool
	HideRestricted bool
}

// Recall limits: the bounds of a RecallRequest (the engine's DefaultK,
// MaxK, MaxQueryBytes and MaxBudgetChars are these).
const (
	DefaultRecallK = 5       // K of a request that sets none
	MaxRecallK     = 100     // the largest K
	MaxQueryBytes  = 8 << 10 // the longest Query
	MaxBudgetChars = 1 << 20 // the largest BudgetChars
)

// RecallRequest is one recall: the query and everything that narrows it.
type RecallRequest struct {
	// Scope: tenant and principal are required; agent and conversation
	// narrow with the wider-level visibility rule.
	Scope Scope
	Query string
	// K is the maximum number of results (default DefaultRecallK, at
	// most MaxRecallK).
	K int
	// MinScore is the floor on the final score: nil means the default
	// (rank.DefaultFloor); 0 turns the floor off.
	MinScore          *float64
	Kinds             []Kind
	Sources           []Source
	Metadata          map[string]any
	AsOf              time.Time // zero: now
	IncludeRestricted bool
	// BudgetChars bounds the total content length of the results (whole
	// memories, in rank order); 0 means no budget.
	BudgetChars int
	// Diversify reorders results for diversity (MMR).
	Diversify bool
	Explain   bool
	Render    bool
	// Preview is a dry run for people inspecting recall (the inspector):
	// the results, floor, k and rendering are those of the same recall
	// without it, and RecallResult.BelowFloorResults also lists the best
	// candidates the floor kept out. It is audited as ActionRecallPreview,
	// not ActionRecall, so a memory's recall history counts only what
	// reached a prompt. Every candidate is read through the store's read
	// gate before ranking (as with Metadata or Diversify), so the ranking
	// is over admitted memories only and a below-floor result is never
	// one the store refused.
	Preview bool
}

// ListRequest narrows a List call and picks its page. Zero values mean
// "no filter".
type ListRequest struct {
	Kinds   []Kind
	Sources []Source
	// Statuses may include StatusExpired (active and expired at Now);
	// StatusActive then means active and not expired at Now.
	Statuses []Status
	// Text is literal text that must occur in the content, compared
	// case-insensitively. It is never interpreted as a pattern or query syntax.
	Text string
	// Now is the time expiry is judged at; required when Statuses is used
	// (the engine sets it).
	Now time.Time
	// Limit is the page size: 0 means store.DefaultPageSize, more than
	// store.MaxPageSize is clamped and the clamp reported in Page.
	Limit int
	// Cursor is Page.NextCursor of the previous page, or "".
	Cursor string
}

// Patch is an update: nil fields are left as they are.
type Patch struct {
	Content     *string
	Reason      *string
	Metadata    map[string]any // replaces the metadata when ReplaceMetadata
	Kind        *Kind
	Sensitivity *Sensitivity
	ExpiresAt   *time.Time
	TTL         time.Duration // sets expires_at to now+TTL
	ValidFrom   *time.Time
	ValidUntil  *time.Time

	ReplaceMetadata bool
	ClearExpiresAt  bool
}

// ImportRequest says where imported memories go.
type ImportRequest struct {
	// Tenant owns every imported memory. A line may name a tenant only if it
	// is this one.
	Tenant string
	// BatchSize is the number of memories stored per atomic batch
	// (default and maximum: the engine's MaxBatch).
	BatchSize int
	// MaxLineBytes bounds one line (default 64 KiB).
	MaxLineBytes int
	// TrustStatus keeps each line's status as the file gives it (for
	// restoring one's own export), where the write gate would otherwise
	// decide: a line that says active is stored active even when the gate
	// would hold it. Off by default; an import that uses it is audited
	// with how many memories kept their file's status over the gate's.
	TrustStatus bool
}

// AuditFilter narrows an audit listing. Zero values mean "no filter".
type AuditFilter struct {
	Principal string
	MemoryID  string
	RecallID  string
	Action    string
	From, To  time.Time // From <= at < To
	Limit     int
	Cursor    string
}

// AuditHistogramRequest asks how many audit events of one action happened
// per hour or day. Zero fields take defaults.
type AuditHistogramRequest struct {
	// Action is the audit action counted (default ActionRecall: the
	// times memories were recalled into a prompt; previews are
	// ActionRecallPreview).
	Action string
	// Bucket is time.Hour or 24*time.Hour (the default); buckets start on
	// a whole UTC hour or at UTC midnight.
	Bucket time.Duration
	// From and To bound the range, From <= at < To. From is rounded down
	// and To up to a bucket boundary. To defaults to the end of the bucket
	// that holds now, From to engine.DefaultHistogramBuckets buckets
	// before To.
	From, To time.Time
}
