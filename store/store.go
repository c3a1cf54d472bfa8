// Package store defines the storage port: the narrow interface the engine
// stores through, implemented once by the portable store (store/sqlstore)
// over a backend's driver (sqlite, postgres). The engine does defaulting,
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
// Implementations must be safe for concurrent use. The conformance suite
// in store/storetest states these rules as tests; every backend runs it.
package store

import (
	"context"
	"fmt"
	"math"
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

	// GetByKey returns the active memory with key at exactly the level of
	// s (its tenant, principal, agent and conversation: a lookup by key
	// names the level; AllPrincipals is refused), restricted ones left out
	// with HideRestricted. A key is unique among the active memories of
	// one key space (a level and a source), so a level may hold one per
	// source: the one of the first source in prefer that has one, else of
	// the first in memgate.Sources order. None is not_found, exactly like
	// a memory outside the scope. A malformed key is invalid_argument
	// naming "key".
	GetByKey(ctx context.Context, s memgate.Scope, key string, prefer ...memgate.Source) (*memgate.Memory, error)

	// List returns memories the scope contains that match f, newest first
	// (by insertion order), in pages. A page is stable under concurrent
	// inserts: rows inserted after the first page never appear on later
	// pages, and no row is returned twice or skipped.
	List(ctx context.Context, s memgate.Scope, f Filter) (*Page, error)

	// Update writes the mutable fields of m (content, content hash, dedup
	// key, reason, metadata, kind, sensitivity, expires_at, valid_from,
	// valid_until, embedding, updated_at, and the write gate's verdict on
	// the new content: status, status_reason and flags, and updated_by) to
	// the memory with m.ID if the scope contains it and its version equals
	// expectedVersion; the version then rises by one. m.Status must be
	// active or pending (invalid_argument otherwise). Seen count and
	// feedback are left as stored. Not in scope or missing: not_found.
	// Version differs: conflict. Only active and pending memories can be
	// updated; others: conflict.
	Update(ctx context.Context, s memgate.Scope, m *memgate.Memory, expectedVersion int64) (*memgate.Memory, error)

	// SetEmbedding stores e as the embedding of the memory id of tenant, in
	// any principal, agent, conversation and status, only if that memory's
	// content_sha256 is still contentSHA256: a vector is never stored beside
	// content it was not computed from, so a concurrent update of the
	// content wins. It reports whether it wrote. It writes the embedding's
	// four fields (provider, model, dim, vector) and nothing else: version,
	// updated_at, status and every other field stay as they are (re-embedding
	// is not a change a caller's compare-and-set should see). It must be an
	// UPDATE of the memory's row, so that whatever follows memory changes
	// (the partition's change sequence) sees it. e must pass
	// memgate.Embedding.Check and tenant be an identifier (invalid_argument
	// before any I/O). A missing id, an id of another tenant and a changed
	// content hash all report false with no error: each means another
	// writer got there first, and the caller moves on.
	SetEmbedding(ctx context.Context, tenant, id, contentSHA256 string, e *memgate.Embedding) (bool, error)

	// SetStatus moves the memory with id from one of ch.From to ch.To,
	// recording ch.Reason as status_reason and ch.By as updated_by, raising
	// the version and setting updated_at to ch.At. With ch.Version set, the
	// memory's version must be it (conflict otherwise, checked before the
	// status): the change applies to the version the caller saw. If the
	// memory is already in ch.To it is returned unchanged (idempotent); in
	// any other status: conflict.
	SetStatus(ctx context.Context, s memgate.Scope, id string, ch StatusChange) (*memgate.Memory, error)

	// Promote approves the pending memory id: it becomes active, with
	// status_reason "approved", its version raised by one, updated_at set
	// to p.At and updated_by to p.By. With p.Version set, the memory's
	// version must be it (conflict otherwise, checked first): a person
	// approves the version they reviewed, never one changed after. When its
	// Supersedes names a memory of the same tenant and
	// principal (in any agent or conversation) that is active, that memory
	// is marked superseded by it (superseded_by = id, version raised,
	// updated_at = p.At) in the same transaction: a pending memory can carry
	// the intent to replace another, which takes effect only when a person
	// approves it. It returns the approved memory and the superseded one;
	// A keyed memory supersedes instead the active memory that has its key
	// in its key space now, if any (the one it was held against, or a
	// newer one: one chain). superseded is nil when there is none and
	// Supersedes is empty or names a memory that is no longer active (revoked, superseded or deleted meanwhile): the
	// approval stands and the link stays as the record of what it was
	// meant to replace. An active memory is returned unchanged (idempotent,
	// superseded nil); any other status: conflict. Not in scope or
	// missing: not_found.
	Promote(ctx context.Context, s memgate.Scope, id string, p Promotion) (approved, superseded *memgate.Memory, err error)

	// Supersede atomically inserts next and marks the memory oldID (which
	// must be active and in scope) superseded by it (superseded_by =
	// next.ID, version raised, updated_at = at, updated_by =
	// next.CreatedBy when set). next must have the same
	// tenant and principal as the old memory (invalid_argument otherwise),
	// next.Supersedes must equal oldID, and next must be active (conflict
	// otherwise: a memory held for approval supersedes only when approved,
	// see Promote). next keeps old's key (a key of its own is
	// invalid_argument), in its own key space: where that is not old's
	// (another source, agent or conversation) and an active memory has the
	// key there, ErrKeyHeld, and nothing is written. The result holds old
	// and next as stored after the writes.
	//
	// Idempotency: keys holds at most one entry, for next, checked as
	// Remember's are (CheckIdempotencyKeys, invalid_argument before any
	// I/O); an empty Key asks for nothing. With a Key, first of all, before
	// old is read: if next's partition (tenant, principal, agent,
	// conversation) holds a record of that Key, nothing is written, and the
	// record answers as in Remember: the memory it names is returned as
	// Next, as it stands now (whatever its status), with Replayed set and
	// Old nil, whatever became of old; a record whose RequestSHA256 differs
	// is Remember's conflict naming "idempotency_key". Otherwise the supersession writes the record
	// (partition, Key) → next.ID in its transaction, acknowledged together
	// with it or not at all. Concurrent calls with one partition and Key
	// supersede at most once; the others replay (or conflict). Records are
	// Remember's (one set per partition: a Key recorded by either method
	// answers both), live until PruneIdempotency or until their memory is
	// deleted, and Forget deletes the principal's.
	Supersede(ctx context.Context, s memgate.Scope, oldID string, next *memgate.Memory, at time.Time, keys ...IdempotencyKey) (*SupersedeResult, error)

	// Delete removes the memory with id (and its vector) for good, with the
	// idempotency records that name it (their key, partition and request
	// hash, which would confirm a guessed content), in one transaction; a
	// retry with such a key is a new request. When it returns, no byte of
	// its content is left in the store's files where the backend can
	// prevent it (SQLite: secure deletion and a truncated write-ahead log;
	// see Forget).
	Delete(ctx context.Context, s memgate.Scope, id string) error

	// Forget removes every memory of (tenant, principal), in every agent and
	// conversation, and returns how many it removed, with every other row
	// that names the principal: its idempotency records (see Remember and
	// Supersede), its retention counters, its change tombstones and head
	// (readers of the partition reset; see PartitionHead). In the audit log,
	// which is kept as the record of what happened, the principal of its
	// events is replaced by pseudonym (the engine's keyed hash,
	// "forgotten:…") and each event's agent by AgentPseudonym (keyed by
	// PseudonymKey) — the one change the log allows; events already under
	// the pseudonym take their agents' too. No other principal's
	// memory or record is touched. When it returns, no byte of the
	// memories' content is left in the store's files where the backend can
	// prevent it: SQLite deletes securely and truncates its write-ahead
	// log (an error when a reader keeps it from doing so: the rows are gone
	// and a retry truncates); PostgreSQL vacuums the tables (README says
	// what it cannot erase).
	Forget(ctx context.Context, tenant, principal, pseudonym string) (int64, error)

	// PseudonymKey returns the database's key for pseudonyms (32 random
	// bytes), made on first use and the same for every process over the
	// database.
	PseudonymKey(ctx context.Context) ([]byte, error)

	// Counts returns the number of memories per (principal, kind, status) in
	// the scope (AllPrincipals for the whole tenant). Expired memories are
	// counted under memgate.StatusExpired when now is not zero.
	Counts(ctx context.Context, s memgate.Scope, now time.Time) ([]Count, error)

	// LoadPartition returns every active memory of (tenant, principal), in
	// any agent or conversation and whether expired or not, with its
	// embedding vector: what the engine needs to build the partition's
	// recall index. Pending, revoked and superseded memories are left out.
	LoadPartition(ctx context.Context, tenant, principal string) ([]*memgate.Memory, error)

	// LoadIndex calls fn with what the recall index needs of every memory
	// LoadPartition returns, in the same order, reading only compact
	// columns: the filter fields, the vector (only when the memory's
	// embedding was made by model, else nil) and the analysed terms of the
	// content, as stored at write time (ContentTerms). A memory whose
	// stored terms are missing or of another analysis.TermsVersion has its
	// content analysed instead, so the terms are always
	// analysis.Terms(content); its terms are then written back, best
	// effort, after fn has seen every row (a write that fails is not an
	// error of the load). The row, its slices and the bytes of its Terms
	// are reused (a backend may decode them from memory its driver lends
	// for one row): fn must copy what it keeps. fn may leave in the row's
	// Vector a slice of its own, of length 0: the next row's vector is
	// then decoded into that slice's capacity where it fits (elsewhere
	// where it does not; never past the capacity, and nothing is written
	// there for a row without a vector), so a caller that keeps the vectors
	// in arrays of its own can have each read in place. An error of fn
	// stops the load and is returned as is.
	LoadIndex(ctx context.Context, tenant, principal string, model EmbeddingModel, fn func(*IndexRow) error) error

	// PartitionSize returns about how many memories LoadIndex passes for
	// (tenant, principal), so that a load can size what holds them at
	// once: the partition's active and pending memories, from a count the
	// store keeps as writes commit (never a scan of the partition). It is
	// an estimate, not a bound: it counts the pending memories LoadIndex
	// leaves out, and writes may commit between it and a load. Tenant and
	// principal must be identifiers (invalid_argument otherwise, before
	// any I/O); no scope applies, the result is only a number.
	PartitionSize(ctx context.Context, tenant, principal string) (int, error)

	// Fetch returns the memories among ids that the scope contains and that
	// pass g, in any order; the others are silently absent. It is the
	// store's final say on recall: the predicate is part of the query that
	// reads the results, so a stale index can only lose a memory, never
	// return a foreign, revoked, superseded, pending or expired one.
	Fetch(ctx context.Context, s memgate.Scope, ids []string, g ReadGate) ([]*memgate.Memory, error)

	// PartitionHead returns the change sequence of the partition (tenant,
	// principal): a number that every committed change to a memory of the
	// partition raises. A change is an insert (Insert, Remember, Supersede's
	// new memory), any write to a stored column (Update, SetStatus,
	// Supersede's old memory, AddFeedback, Remember's dedup fold, any change
	// of the embedding) and a delete (Delete, Forget, DeleteExpired,
	// Remember's retention eviction). The rules, which ChangesSince relies
	// on:
	//   - Each change of each memory gets its own sequence number, above
	//     every earlier one of the partition: a transaction that changes n
	//     memories raises the head by at least n. Numbers need not be dense.
	//   - Numbers follow commit order within the partition: whoever reads
	//     head h also sees every change numbered h or lower. (A global
	//     sequence drawn before commit does not do this; raising a
	//     per-partition counter row in the writing transaction does, as
	//     writers of one partition then queue on that row.)
	//   - It is 0 for a partition never written and never decreases:
	//     Forget does not reset it.
	// A change that rolls back (a conflict, a refused write) does not count.
	// Tenant and principal must be identifiers (invalid_argument otherwise,
	// before any I/O); no scope applies, the result is only a number. The
	// engine calls it on every recall: backends answer with one
	// primary-key lookup.
	PartitionHead(ctx context.Context, tenant, principal string) (int64, error)

	// ChangesSince returns what changed in the partition (tenant, principal)
	// after the change sequence since (a head PartitionHead or ChangesSince
	// returned, or 0 for everything), read in one consistent snapshot:
	//   - Memories: every memory of the partition whose last change is
	//     numbered above since, once, in its current state (not as it was
	//     at that change), whatever its status or expiry, with its
	//     embedding vector, in ascending order of its last change.
	//   - Deleted: the ids of the memories deleted from the partition after
	//     since that the partition does not hold now (an id deleted and
	//     stored again is in Memories only), each once, in ascending order
	//     of (last) deletion.
	//   - At most limit changes are read, the lowest numbered, so Memories
	//     and Deleted hold at most limit items together.
	//   - Head: the sequence the result brings a reader to: a copy of the
	//     partition as of since, with Memories upserted and Deleted removed,
	//     is the partition as of Head. It is the number of the last change
	//     read when More is set (then above since), else the partition's
	//     head in the snapshot read.
	//   - More: the limit stopped the read before the head; call again from
	//     Head.
	//   - Reset: the changes after since cannot be told, because deletions
	//     after since were pruned (PruneChanges) or since is above the head
	//     (a database restored from an older backup). Memories and Deleted
	//     are empty, Head is the head; the reader must reload the partition
	//     (PartitionHead, then LoadPartition).
	// A since of 0 is never Reset unless something was pruned. A negative
	// since, a limit below 1 or an invalid tenant or principal is
	// invalid_argument, before any I/O. No memory of another partition is
	// ever returned, nor the id of one.
	ChangesSince(ctx context.Context, tenant, principal string, since int64, limit int) (*Changes, error)

	// PruneChanges deletes, across every tenant, at most limit of the
	// deletion records ChangesSince reports Deleted from: those made before
	// before (the store stamps each with its own clock when the memory is
	// deleted), oldest first. It returns how many it deleted; a limit of 0
	// or less deletes nothing. Each partition keeps the highest sequence
	// pruned from it, and ChangesSince from below that reports Reset, so
	// pruning too early costs readers a reload and never loses a deletion.
	// Heads, memories and the audit log are untouched. The sweeper calls it.
	PruneChanges(ctx context.Context, before time.Time, limit int) (int64, error)

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
	//   - Retention: after the inserts, for every population (tenant,
	//     principal, agent, kind, source) written whose caps[kind] is
	//     positive, if more than caps[kind] memories of that population are
	//     active or pending, the oldest of that same population (insertion
	//     order) are deleted until it fits, and reported in Evicted. The
	//     count and the eviction use one predicate: no kind is evicted for
	//     another's overflow, no agent's level for another's, no source for
	//     another's (a flood of assistant memories never evicts a user's or
	//     a system one), and revoked or superseded memories neither count
	//     nor get evicted.
	//   - Idempotency: keys, when given, has one entry per memory (else
	//     invalid_argument, before any I/O); an entry with an empty Key
	//     asks for nothing. For an entry with a Key, first of all: if the
	//     memory's partition (tenant, principal, agent, conversation)
	//     already holds a record of that Key, nothing is inserted or
	//     folded for it: the memory the record names is returned in its
	//     place, as it stands now (whatever its status), with Replayed
	//     set. A record whose RequestSHA256 differs is a conflict naming
	//     "idempotency_key" (the key was used for another request), and
	//     fails the call. Otherwise, once the memory is inserted or folded, a
	//     record of (partition, Key) → the id that stands for it is
	//     written in the same transaction, so a write is acknowledged
	//     together with its record or not at all. Two inputs of one call
	//     with the same partition and Key: invalid_argument. Records are
	//     never read outside their partition, live until PruneIdempotency
	//     removes them or their memory is deleted (Delete, DeleteExpired,
	//     a retention eviction: each drops the records naming the memories
	//     it deletes), and Forget deletes the principal's.
	//   - Keys: an active or pending memory with a Key (not folded, not
	//     replayed; a revoked or superseded one, an import's history, is
	//     stored as it is) takes it from the active memory that has it at
	//     its level (tenant, principal, agent, conversation), if any: an
	//     active memory supersedes that one in the same transaction
	//     (superseded_by, as Supersede does; Superseded[i] names it), a
	//     pending one is stored with Supersedes naming it and supersedes
	//     it when approved (Promote). A pending memory whose Supersedes
	//     already names another memory (a new version held for approval)
	//     and whose key another memory has in its key space is
	//     ErrKeyHeld, as Supersede's is. Two active memories never share a key at one level;
	//     concurrent calls with one key queue, so each supersedes the one
	//     before (one chain). Dedup of a keyed memory folds only into the
	//     memory with the same key, and of one without a key only into
	//     one without.
	// Memories must be new (version 1, ids unused in their tenant); a
	// SeenCount of 0 is stored as 1. Memories[i] is read back as stored
	// after the writes (a memory evicted by the same call as it stood
	// before); the inputs are not modified.
	Remember(ctx context.Context, ms []*memgate.Memory, caps map[memgate.Kind]int, keys ...IdempotencyKey) (*WriteResult, error)

	// PruneIdempotency deletes, across every tenant, at most limit of the
	// idempotency records Remember and Supersede wrote before before (the
	// store stamps each with its own clock), oldest first, and returns how
	// many it deleted; a limit of 0 or less deletes nothing. A retry after
	// its record is pruned is stored again. The sweeper calls it.
	PruneIdempotency(ctx context.Context, before time.Time, limit int) (int64, error)

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
	// returns them (a limit of 0 or less deletes nothing), with the
	// idempotency records naming them (see Delete). It is the
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

	// Tenants returns every tenant that has a memory, an audit event or a
	// key, each once, in byte order (empty, not nil, for an empty store).
	// It is the one way to enumerate tenants, across every one of them:
	// "memgate migrate" copies a whole database with it, and no request
	// path may call it.
	Tenants(ctx context.Context) ([]string, error)

	// CreateFirstKey stores k only if the store holds no key at all (revoked
	// ones count), atomically: of several servers starting at once on a new
	// database, exactly one creates the first admin key. It reports whether
	// k was stored.
	CreateFirstKey(ctx context.Context, k *memgate.Key) (bool, error)

	// Calibration returns the calibration stored for the embedder model
	// (provider, model, dim) and probe set version, or not_found. The
	// vectors come back bit for bit as stored.
	Calibration(ctx context.Context, provider, model string, dim int, probeVersion string) (*Calibration, error)

	// PutCalibration stores c (checked with CheckCalibration) unless a
	// calibration with its provider, model, dim and probe version is
	// stored already, and returns the one that is stored then: c, or the
	// existing one, which wins. So every process over the store calibrates
	// a model with the same vectors, however many put one at once.
	PutCalibration(ctx context.Context, c *Calibration) (*Calibration, error)

	// Close releases the backend's resources.
	Close() error
}

// Calibration is an embedder model's embedding of the probe set (package
// rank, Calibration). It belongs to the model, not to a tenant, and holds
// no one's data: the probes are fixed texts.
type Calibration struct {
	Provider     string
	Model        string
	Dim          int
	ProbeVersion string
	// Vectors are the probes' embeddings, in probe order, each of Dim
	// values.
	Vectors   [][]float32
	CreatedAt time.Time
}

// MaxCalibrationVectors bounds Calibration.Vectors and MaxCalibrationDim
// their dimension (the index's largest).
const (
	MaxCalibrationVectors = 4096
	MaxCalibrationDim     = 16384
)

// CheckCalibration validates a calibration before it is stored: names set
// and bounded, 1 ≤ Dim ≤ MaxCalibrationDim, 1 to
// MaxCalibrationVectors vectors, each of Dim finite values.
func CheckCalibration(c *Calibration) error {
	switch {
	case c == nil:
		return memgate.FieldError("calibration", "is required")
	case c.Provider == "" || len(c.Provider) > 128:
		return memgate.FieldError("calibration.provider", "must have 1 to 128 bytes")
	case c.Model == "" || len(c.Model) > 256:
		return memgate.FieldError("calibration.model", "must have 1 to 256 bytes")
	case c.ProbeVersion == "" || len(c.ProbeVersion) > 64:
		return memgate.FieldError("calibration.probe_version", "must have 1 to 64 bytes")
	case c.Dim < 1 || c.Dim > MaxCalibrationDim:
		return memgate.FieldError("calibration.dim", "must be between 1 and %d", MaxCalibrationDim)
	case len(c.Vectors) == 0 || len(c.Vectors) > MaxCalibrationVectors:
		return memgate.FieldError("calibration.vectors", "must hold 1 to %d vectors", MaxCalibrationVectors)
	case c.CreatedAt.IsZero():
		return memgate.FieldError("calibration.created_at", "is required")
	}
	for _, v := range c.Vectors {
		if len(v) != c.Dim {
			return memgate.FieldError("calibration.vectors", "every vector must have %d values", c.Dim)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return memgate.FieldError("calibration.vectors", "must be finite")
			}
		}
	}
	return nil
}

// EncodeVectors packs vectors of one dimension back to back (EncodeVector
// each); DecodeVectors reverses it.
func EncodeVectors(vs [][]float32) []byte {
	var b []byte
	for _, v := range vs {
		b = append(b, EncodeVector(v)...)
	}
	return b
}

// DecodeVectors splits b into vectors of dim values; a length that is not
// a multiple of 4·dim is an error (a corrupt row).
func DecodeVectors(b []byte, dim int) ([][]float32, error) {
	if dim < 1 || len(b)%(4*dim) != 0 {
		return nil, fmt.Errorf("stored vectors have %d bytes, not a multiple of %d", len(b), 4*dim)
	}
	out := make([][]float32, 0, len(b)/(4*dim))
	for i := 0; i < len(b); i += 4 * dim {
		v, err := DecodeVector(b[i : i+4*dim])
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
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
	Replayed     []bool // the memory was stored by an earlier call with the same idempotency key
	// Superseded[i] is the id of the memory the i-th input superseded by
	// taking its key, "" for none.
	Superseded []string
	Evicted    []Ref
}

// SupersedeResult is the outcome of Supersede: Old is the memory
// superseded and Next the memory that superseded it, both as stored after
// the call. On a replay (Replayed: an earlier call with the same
// idempotency key superseded, this one wrote nothing) Next is the memory
// the key's record names, as it stands now, and Old is nil.
type SupersedeResult struct {
	Old      *memgate.Memory
	Next     *memgate.Memory
	Replayed bool
}

// IdempotencyKey lets a client retry a remember or a supersession without
// storing twice (see Store.Remember and Store.Supersede). Key is the
// client's, checked by memgate.CheckIdempotencyKey; RequestSHA256 is the
// lower-case hex SHA-256 of the request as the client sent it, so that a
// key reused for another request is told apart from a retry.
type IdempotencyKey struct {
	Key           string
	RequestSHA256 string
}

// Changes is what ChangesSince returns; see there. Memories and Deleted
// are never nil.
type Changes struct {
	Memories []*memgate.Memory
	Deleted  []string
	Head     int64
	More     bool
	Reset    bool
}

// Ref names a memory.
type Ref struct {
	Tenant    string       `json:"tenant"`
	Principal string       `json:"principal"`
	ID        string       `json:"id"`
	Kind      memgate.Kind `json:"kind"`
}

// AuditDrainer is a Store that appends audit events to an inbox and moves
// them into the log later (sqlstore: one row per append, issue 27): every
// read of the log sees every event appended before it either way, and
// DrainAudit moves what the inbox holds now, so that it stays small and
// reads find little to move. The engine calls it in the background.
type AuditDrainer interface {
	DrainAudit(ctx context.Context) error
}

// AuditEvent is memgate.AuditEvent (the callers' contract).
// AuditedRememberer is a Store that can append a write's audit events in
// the write's own transaction: RememberAudited is Remember, and, before
// the commit, appends the events audit returns for the result (it may be
// called more than once if the transaction is retried, and must only
// read its argument). The write and its events commit together or not at
// all; an event AppendAudit would refuse fails the write.
type AuditedRememberer interface {
	RememberAudited(ctx context.Context, ms []*memgate.Memory, caps map[memgate.Kind]int, audit func(*WriteResult) []AuditEvent, keys ...IdempotencyKey) (*WriteResult, error)
}

type AuditEvent = memgate.AuditEvent

// AuditFilter is memgate.AuditFilter (the callers' contract).
type AuditFilter = memgate.AuditFilter

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

// AuditPage is memgate.AuditPage (the callers' contract).
type AuditPage = memgate.AuditPage

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

// Filter is memgate.ListRequest, what narrows List (the callers' contract).
type Filter = memgate.ListRequest

// Page is memgate.Page (the callers' contract).
type Page = memgate.Page

// StatusChange describes a transition for SetStatus.
type StatusChange struct {
	From   []memgate.Status
	To     memgate.Status
	Reason string
	At     time.Time
	// By is the key id recorded as updated_by; Version, when set, the
	// version the change applies to.
	By      string
	Version int64
}

// Promotion is an approval (Promote): when, by whom, and of which version
// (0: whatever version the memory has).
type Promotion struct {
	At      time.Time
	By      string
	Version int64
}

// VersionConflict is the error for a status change or an approval made to
// another version than the memory has now (a conflict naming If-Match,
// where the caller's version comes from).
func VersionConflict(cur *memgate.Memory, expected int64) error {
	return &memgate.Error{Code: memgate.ECONFLICT, Field: "If-Match", Message: fmt.Sprintf("memory is at version %d, not the expected %d", cur.Version, expected)}
}

// Count is memgate.Count (the callers' contract).
type Count = memgate.Count

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

// EmbeddingModel names the embeddings LoadIndex passes on: those of this
// provider, model and dimension. The zero value passes none.
type EmbeddingModel struct {
	Provider, Model string
	Dim             int
}

// IndexRow is what LoadIndex reads of one memory. Times are Unix
// microseconds, 0 when unset.
type IndexRow struct {
	ID, Agent, Conversation string
	Kind                    memgate.Kind
	Source                  memgate.Source
	Sensitivity             memgate.Sensitivity
	CreatedAt, ExpiresAt    int64
	ValidFrom, ValidUntil   int64
	Vector                  []float32 // nil unless the embedding is of the model asked for
	Terms                   []string  // analysis.Terms(content), repeats grouped
}
