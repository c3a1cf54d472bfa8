// Package store defines the storage port: the narrow interface a backend
// (sqlite, postgres) implements for the engine. The engine does defaulting,
// validation, gating and ID/timestamp assignment; a backend stores and reads
// faithfully and applies the caller's Scope inside every query.
//
// Contract for every method that takes a memgate.Scope:
//   - The scope is applied in the query itself (never by filtering results
//     afterwards). A memory outside it is reported exactly like a missing one:
//     memgate.ErrNotFound(), same code, same message.
//   - An invalid scope (empty tenant, empty principal without AllPrincipals) is
//     refused with invalid_argument before any I/O.
//   - Errors are *memgate.Error values; driver errors are translated in one
//     place per backend (unavailable for a busy/closed database, internal
//     otherwise).
//
// Backends must be safe for concurrent use. The conformance suite in
// store/storetest states these rules as tests; every backend runs it.
package store

import (
	"context"
	"time"

	"github.com/memgate/memgate"
)

// Page sizes for List.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

// Store is the storage port.
type Store interface {
	// Insert stores new memories, all or none. The engine has assigned IDs,
	// timestamps, version 1 and content hashes. An ID already used in the
	// same tenant is a conflict (IDs are unique per tenant, so a caller in
	// one tenant learns nothing about another).
	Insert(ctx context.Context, ms []*memgate.Memory) error

	// Get returns the memory with id if the scope contains it, whatever its
	// status or expiry.
	Get(ctx context.Context, s memgate.Scope, id string) (*memgate.Memory, error)

	// List returns memories the scope contains that match f, newest first
	// (by insertion order), in pages. A page is stable under concurrent
	// inserts: rows inserted after the first page never appear on later
	// pages, and no row is returned twice or skipped.
	List(ctx context.Context, s memgate.Scope, f Filter) (*Page, error)

	// Update writes the mutable fields of m (content, content hash, dedup
	// key, reason, metadata, kind, sensitivity, expires_at, valid_from,
	// valid_until, embedding, updated_at) to the memory with m.ID if the
	// scope contains it and its version equals expectedVersion; the version
	// then rises by one. Seen count, flags and feedback are left as stored.
	// Not in scope or missing: not_found. Version differs: conflict. Only
	// active and pending memories can be updated; others: conflict.
	Update(ctx context.Context, s memgate.Scope, m *memgate.Memory, expectedVersion int64) (*memgate.Memory, error)

	// SetStatus moves the memory with id from one of ch.From to ch.To,
	// recording ch.Reason as status_reason, raising the version and setting
	// updated_at to ch.At. If the memory is already in ch.To it is returned
	// unchanged (idempotent); in any other status: conflict.
	SetStatus(ctx context.Context, s memgate.Scope, id string, ch StatusChange) (*memgate.Memory, error)

	// Supersede atomically inserts next and marks the memory oldID (which
	// must be active and in scope) superseded by it. next must have the same
	// tenant and principal as the old memory (invalid_argument otherwise) and
	// next.Supersedes must equal oldID.
	Supersede(ctx context.Context, s memgate.Scope, oldID string, next *memgate.Memory, at time.Time) (old *memgate.Memory, err error)

	// Delete removes the memory with id (and its vector) for good.
	Delete(ctx context.Context, s memgate.Scope, id string) error

	// Forget removes every memory of (tenant, principal), in every agent and
	// conversation, and returns how many it removed. No other principal's
	// memory is touched.
	Forget(ctx context.Context, tenant, principal string) (int64, error)

	// Counts returns the number of memories per (principal, kind, status) in
	// the scope (AllPrincipals for the whole tenant). Expired memories are
	// counted under memgate.StatusExpired when now is not zero.
	Counts(ctx context.Context, s memgate.Scope, now time.Time) ([]Count, error)

	// LoadPartition returns every active memory of (tenant, principal), in
	// any agent or conversation and whether expired or not, with its
	// embedding vector: what the engine needs to build the partition's
	// recall index. Pending, revoked and superseded memories are left out.
	LoadPartition(ctx context.Context, tenant, principal string) ([]*memgate.Memory, error)

	// Fetch returns the memories among ids that the scope contains and that
	// pass g, in any order; the others are silently absent. It is the
	// store's final say on recall: the predicate is part of the query that
	// reads the results, so a stale index can only lose a memory, never
	// return a foreign, revoked, superseded, pending or expired one.
	Fetch(ctx context.Context, s memgate.Scope, ids []string, g ReadGate) ([]*memgate.Memory, error)

	// Remember stores new memories with the write gate's last steps, in one
	// transaction, all or none:
	//   - Dedup: a memory whose DedupKey is set, when an active memory (or a
	//     pending one, if the new memory is pending too) with the same
	//     tenant, principal, agent, conversation, kind and DedupKey exists (or was stored earlier in the same call), is
	//     not inserted: the existing memory's seen_count rises by one, its
	//     updated_at becomes the new memory's (its version does not change),
	//     and it is returned in the new memory's place with Deduplicated set.
	//     A memory expired at the new memory's CreatedAt (expires_at at or
	//     before it) absorbs nothing: no read would ever show the fold.
	//   - Retention: after the inserts, for every (tenant, principal, kind)
	//     written whose caps[kind] is positive, if more than caps[kind]
	//     memories of that population are active or pending, the oldest of
	//     that same population (insertion order) are deleted until it fits,
	//     and reported in Evicted. The count and the eviction use one
	//     predicate: no kind is evicted for another's overflow, and revoked
	//     or superseded memories neither count nor get evicted.
	// Memories must be new (version 1, ids unused in their tenant); a
	// SeenCount of 0 is stored as 1. Memories[i] is read back as stored
	// after the writes (a memory evicted by the same call as it stood
	// before); the inputs are not modified.
	Remember(ctx context.Context, ms []*memgate.Memory, caps map[memgate.Kind]int) (*WriteResult, error)

	// FindDuplicates returns, for each memory, the id of the active or
	// pending memory Remember would fold it into right now ("" when none, or
	// when its DedupKey is empty). It reads only; Remember decides again in
	// its transaction. The engine uses it to skip embedding duplicates.
	FindDuplicates(ctx context.Context, ms []*memgate.Memory) ([]string, error)

	// AddFeedback records one usefulness report in [-1, 1] on the memory
	// with id (feedback count and sum rise; the version and updated_at do
	// not). A value outside [-1, 1] or NaN is invalid_argument naming
	// "value". Like Update, only active and pending memories (expired or
	// not) take feedback; revoked or superseded: conflict.
	AddFeedback(ctx context.Context, s memgate.Scope, id string, value float64) (*memgate.Memory, error)

	// DeleteExpired deletes, across every tenant, at most limit memories
	// whose expires_at is at or before before, whatever their status, and
	// returns them (a limit of 0 or less deletes nothing). It is the
	// sweeper's cleanup: reads already exclude expired memories.
	DeleteExpired(ctx context.Context, before time.Time, limit int) ([]Ref, error)

	// AppendAudit appends events to the audit log, all or none. The log is
	// append-only: no method changes or deletes an event, and Forget keeps
	// it. Tenant, actor, action and at are required; identifiers (tenant,
	// principal, agent, actor, action, recall id, reason, memory ids, count
	// names) must be well-formed idents, query_sha256 a lower-case hex
	// SHA-256, scores finite and one per memory id: invalid_argument
	// otherwise, so free text cannot reach the log.
	AppendAudit(ctx context.Context, events []AuditEvent) error

	// ListAudit returns the audit events of a tenant that match f, newest
	// first, in pages (same paging rules as List).
	ListAudit(ctx context.Context, tenant string, f AuditFilter) (*AuditPage, error)

	// AuditHistogram counts the audit events of q.Tenant whose action is
	// q.Action, and whose principal is q.Principal when that is not empty
	// (empty: every principal, and events without one), per bucket of
	// q.Bucket from q.From: count i is the number of such events with
	// From + i·Bucket <= at < From + (i+1)·Bucket. There are
	// (To − From)/Bucket counts, zeros included, oldest first. The query is
	// checked first (AuditHistogramQuery.Buckets): a malformed one is
	// invalid_argument naming the field, before any I/O. Backends count in
	// the database (one aggregate query), never by reading the events.
	AuditHistogram(ctx context.Context, q AuditHistogramQuery) ([]int64, error)

	// CreateKey stores a new API key record. The caller (package auth) has
	// generated the id and the hash and validated the fields; the store
	// keeps them faithfully. A key id is unique within its tenant and a hash
	// across every tenant: reusing either is a conflict, and nothing is
	// stored. The secret itself never reaches the store.
	CreateKey(ctx context.Context, k *memgate.Key) error

	// KeyByHash returns the key whose Hash is hash, in any tenant, revoked
	// or not (the caller checks RevokedAt): authentication starts from the
	// hash of the presented secret, before any tenant is known. A hash no
	// key has is not_found.
	KeyByHash(ctx context.Context, hash string) (*memgate.Key, error)

	// ListKeys returns every key of tenant, revoked ones included, oldest
	// first. Another tenant's keys are never returned.
	ListKeys(ctx context.Context, tenant string) ([]*memgate.Key, error)

	// RevokeKey sets the revoked time of the key id of tenant to at and
	// returns it. Revoking a revoked key returns it unchanged (its first
	// revocation time stands). A key of another tenant is not_found, exactly
	// like a missing one.
	RevokeKey(ctx context.Context, tenant, id string, at time.Time) (*memgate.Key, error)

	// CountKeys returns the number of keys in every tenant, revoked ones
	// included (serve creates its first admin key only when it is zero).
	CountKeys(ctx context.Context) (int64, error)

	// CreateFirstKey stores k only if the store holds no key at all (revoked
	// ones count), atomically: of several servers starting at once on a new
	// database, exactly one creates the first admin key. It reports whether
	// k was stored.
	CreateFirstKey(ctx context.Context, k *memgate.Key) (bool, error)

	// Close releases the backend's resources.
	Close() error
}

// ErrKeyNotFound is the one error for a key that does not exist and for a
// key of another tenant.
func ErrKeyNotFound() *memgate.Error {
	return &memgate.Error{Code: memgate.ENOTFOUND, Message: "key not found"}
}

// WriteResult is the outcome of Remember: Memories[i] is what stands for
// the i-th input (the input as stored, or the existing memory it folded
// into), Deduplicated[i] whether it folded, and Evicted the memories the
// retention caps removed, oldest first per population.
type WriteResult struct {
	Memories     []*memgate.Memory
	Deduplicated []bool
	Evicted      []Ref
}

// Ref names a memory.
type Ref struct {
	Tenant    string       `json:"tenant"`
	Principal string       `json:"principal"`
	ID        string       `json:"id"`
	Kind      memgate.Kind `json:"kind"`
}

// AuditEvent is one entry of the audit log. It never holds memory content
// or query text: ids, counts, scores and a hash of the query only.
type AuditEvent struct {
	Seq       int64     `json:"seq"` // assigned by the store
	Tenant    string    `json:"tenant"`
	Principal string    `json:"principal,omitempty"`
	Agent     string    `json:"agent,omitempty"`
	Actor     string    `json:"actor"` // who acted: a key id, "cli", "sweeper"
	Action    string    `json:"action"`
	At        time.Time `json:"at"`
	// MemoryIDs are the memories acted on (for a recall: returned, in
	// order, with Scores beside them).
	MemoryIDs   []string  `json:"memory_ids,omitempty"`
	Scores      []float64 `json:"scores,omitempty"`
	RecallID    string    `json:"recall_id,omitempty"`
	QuerySHA256 string    `json:"query_sha256,omitempty"`
	// Counts carries numbers such as candidates, below_floor, forgotten.
	Counts map[string]int64 `json:"counts,omitempty"`
	// Reason is a machine code (e.g. contains_secret), never free text.
	Reason string `json:"reason,omitempty"`
}

// AuditFilter narrows ListAudit. Zero values mean "no filter".
type AuditFilter struct {
	Principal string
	MemoryID  string
	RecallID  string
	Action    string
	From, To  time.Time // From <= at < To
	Limit     int
	Cursor    string
}

// MaxHistogramBuckets bounds the buckets of one AuditHistogram call.
const MaxHistogramBuckets = 400

// AuditHistogramQuery is what AuditHistogram counts. From, To and Bucket
// are whole microseconds (the precision of stored times); the engine
// aligns them to UTC hours or days, but a backend assumes no alignment:
// buckets start at From.
type AuditHistogramQuery struct {
	Tenant    string
	Principal string // "": every principal
	Action    string
	From, To  time.Time // From <= at < To
	Bucket    time.Duration
}

// Buckets checks q and returns its number of buckets. Tenant and Action
// must be identifiers and Principal empty or one; Bucket positive; From
// before To; the range a whole number of buckets, at most
// MaxHistogramBuckets of them; and From, To and Bucket whole microseconds.
// Errors are invalid_argument naming the field. Backends share it.
func (q AuditHistogramQuery) Buckets() (int, error) {
	if err := memgate.CheckIdent("tenant", q.Tenant); err != nil {
		return 0, err
	}
	if q.Principal != "" {
		if err := memgate.CheckIdent("principal", q.Principal); err != nil {
			return 0, err
		}
	}
	if err := memgate.CheckIdent("action", q.Action); err != nil {
		return 0, err
	}
	switch {
	case q.Bucket <= 0 || q.Bucket%time.Microsecond != 0:
		return 0, memgate.FieldError("bucket", "must be a positive whole number of microseconds")
	case q.From.IsZero() || !q.From.Equal(q.From.Truncate(time.Microsecond)):
		return 0, memgate.FieldError("from", "must be a time in whole microseconds")
	case q.To.IsZero() || !q.To.Equal(q.To.Truncate(time.Microsecond)):
		return 0, memgate.FieldError("to", "must be a time in whole microseconds")
	case !q.To.After(q.From):
		return 0, memgate.FieldError("to", "must be after from")
	}
	span := q.To.Sub(q.From)
	if span/q.Bucket > MaxHistogramBuckets || !q.From.Add(span).Equal(q.To) { // Sub saturates
		return 0, memgate.FieldError("from", "the range holds more than %d buckets", MaxHistogramBuckets)
	}
	if span%q.Bucket != 0 {
		return 0, memgate.FieldError("to", "must be a whole number of buckets after from")
	}
	return int(span / q.Bucket), nil
}

// AuditPage is one page of ListAudit.
type AuditPage struct {
	Events     []AuditEvent `json:"events"`
	NextCursor string       `json:"next_cursor,omitempty"`
	Limit      int          `json:"limit"`
	Clamped    bool         `json:"clamped,omitempty"`
}

// ReadGate is the recall predicate. A memory passes when it is active, not
// expired at Now nor at AsOf (expires_at > both), valid at AsOf (valid_from
// unset or <= AsOf, valid_until unset or > AsOf), of one of Kinds and
// Sources (when given), standard unless IncludeRestricted, and its metadata
// holds every key of Metadata with an equal value.
type ReadGate struct {
	Now               time.Time
	AsOf              time.Time
	Kinds             []memgate.Kind
	Sources           []memgate.Source
	IncludeRestricted bool
	// Metadata values are strings, booleans or numbers (json.Number,
	// float64, int, int64); a string never equals a number.
	Metadata map[string]any
}

// MaxFetch bounds the ids of one Fetch call.
const MaxFetch = 1000

// Filter narrows List. Zero values mean "no filter".
type Filter struct {
	Kinds   []memgate.Kind
	Sources []memgate.Source
	// Statuses may include memgate.StatusExpired (active and expired at Now);
	// memgate.StatusActive then means active and not expired at Now.
	Statuses []memgate.Status
	// Text is literal text that must occur in the content, compared
	// case-insensitively. It is never interpreted as a pattern or query syntax.
	Text string
	// Now is the time expiry is judged at; required when Statuses is used.
	Now time.Time
	// Limit is the page size: 0 means DefaultPageSize, more than MaxPageSize
	// is clamped and the clamp reported in Page.
	Limit int
	// Cursor is Page.NextCursor of the previous page, or "".
	Cursor string
}

// Page is one page of List.
type Page struct {
	Memories   []*memgate.Memory
	NextCursor string // "" on the last page
	Limit      int    // the page size used
	Clamped    bool   // the requested limit exceeded MaxPageSize
}

// StatusChange describes a transition for SetStatus.
type StatusChange struct {
	From   []memgate.Status
	To     memgate.Status
	Reason string
	At     time.Time
}

// Count is one row of Counts.
type Count struct {
	Principal string         `json:"principal"`
	Kind      memgate.Kind   `json:"kind"`
	Status    memgate.Status `json:"status"`
	N         int64          `json:"n"`
}

// ClampLimit applies the page-size rule; backends share it.
func ClampLimit(n int) (limit int, clamped bool) {
	switch {
	case n <= 0:
		return DefaultPageSize, false
	case n > MaxPageSize:
		return MaxPageSize, true
	}
	return n, false
}
