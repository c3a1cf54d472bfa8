package store

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strings"

	"github.com/memgate/memgate"
)

// The checks below are the parts of the port's contract that do not depend
// on the database: every backend calls them, before any I/O or, for the
// ones given a stored memory, inside its transaction, so that all refuse
// the same input with the same code, field and message.

// CheckOwner refuses a memory to write without a well-formed id and owner
// (tenant, principal, agent, conversation): invalid_argument.
func CheckOwner(m *memgate.Memory) error {
	if m == nil {
		return memgate.FieldError("memory", "is required")
	}
	if err := memgate.CheckIdent("id", m.ID); err != nil {
		return err
	}
	return m.Scope().Validate()
}

// CheckNew is what Remember requires of each memory: CheckOwner, and
// version 1.
func CheckNew(m *memgate.Memory) error {
	if err := CheckOwner(m); err != nil {
		return err
	}
	if m.Version != 1 {
		return memgate.FieldError("version", "must be 1 for a new memory")
	}
	return nil
}

// CheckCounters refuses counters no sequence of writes could produce, so
// they fail as invalid_argument before the write rather than as a
// constraint inside the database: a negative seen count or feedback count,
// a sum that is not finite or larger in size than the count (each report
// is in [-1, 1]).
func CheckCounters(m *memgate.Memory) error {
	switch f := m.Feedback; {
	case m.SeenCount < 0:
		return memgate.FieldError("seen_count", "must not be negative")
	case f.Count < 0:
		return memgate.FieldError("feedback.count", "must not be negative")
	case math.IsNaN(f.Sum) || math.Abs(f.Sum) > float64(f.Count):
		return memgate.FieldError("feedback.sum", "must be finite and at most the count in size")
	}
	return nil
}

// CheckSuccessor checks the memory Supersede inserts before any I/O: a
// well-formed owner (CheckOwner) and Supersedes naming oldID.
func CheckSuccessor(oldID string, next *memgate.Memory) error {
	if err := CheckOwner(next); err != nil {
		return err
	}
	if next.Supersedes != oldID {
		return memgate.FieldError("supersedes", "must be the id of the memory being superseded")
	}
	return nil
}

// CheckSupersede checks, inside Supersede's transaction, that next may
// supersede old as stored: same tenant and principal (invalid_argument),
// old active (conflict), and next active (conflict: a memory held for
// approval must not retire an approved one; it supersedes when Promote
// approves it).
func CheckSupersede(old, next *memgate.Memory) error {
	switch {
	case next.Tenant != old.Tenant:
		return memgate.FieldError("tenant", "must be the tenant of the memory being superseded")
	case next.Principal != old.Principal:
		return memgate.FieldError("principal", "must be the principal of the memory being superseded")
	case old.Status != memgate.StatusActive:
		return memgate.Errorf(memgate.ECONFLICT, "memory is %s; only an active memory can be superseded", old.Status)
	case next.Status != memgate.StatusActive:
		return memgate.Errorf(memgate.ECONFLICT, "the new memory is %s; only an active memory supersedes at once, a pending one when it is approved", next.Status)
	}
	return nil
}

// UpdateConflict is the conflict Update reports when its compare-and-set
// wrote nothing although the memory is in scope: cur is the memory as it
// stands, read in the same transaction. Its status refused the update, or
// else its version moved on.
func UpdateConflict(cur *memgate.Memory, expectedVersion int64) error {
	if cur.Status != memgate.StatusActive && cur.Status != memgate.StatusPending {
		return memgate.Errorf(memgate.ECONFLICT, "memory is %s; only active or pending memories can be updated", cur.Status)
	}
	return memgate.Errorf(memgate.ECONFLICT, "memory is at version %d, not the expected %d", cur.Version, expectedVersion)
}

// CheckFeedback refuses a feedback value AddFeedback must not record: NaN
// or outside [-1, 1], invalid_argument naming value.
func CheckFeedback(value float64) error {
	if math.IsNaN(value) || value < -1 || value > 1 {
		return memgate.FieldError("value", "must be a number from -1 to 1")
	}
	return nil
}

// CheckSetEmbedding checks SetEmbedding's input before any I/O: tenant an
// identifier, and e present and passing memgate.Embedding.Check.
func CheckSetEmbedding(tenant string, e *memgate.Embedding) error {
	if err := memgate.CheckIdent("tenant", tenant); err != nil {
		return err
	}
	if e == nil {
		return memgate.FieldError("embedding", "is required")
	}
	return e.Check()
}

// CheckAuditEvent refuses an event the log must not hold (see
// Store.AppendAudit). Besides the required tenant, actor, action and time,
// every identifier must look like one and the query hash like a hash: the
// log holds ids, codes, counts and scores, and these checks keep free text
// (content, a query) out of it.
func CheckAuditEvent(e *AuditEvent) error {
	if err := memgate.CheckIdent("tenant", e.Tenant); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{
		{"principal", e.Principal}, {"agent", e.Agent}, {"recall_id", e.RecallID}, {"reason", e.Reason},
	} {
		if f.v != "" {
			if err := memgate.CheckIdent(f.name, f.v); err != nil {
				return err
			}
		}
	}
	if err := memgate.CheckIdent("actor", e.Actor); err != nil {
		return err
	}
	if err := memgate.CheckIdent("action", e.Action); err != nil {
		return err
	}
	if e.At.IsZero() {
		return memgate.FieldError("at", "is required")
	}
	if e.ContentSHA256 != "" && !isSHA256Hex(e.ContentSHA256) {
		return memgate.FieldError("content_sha256", "must be a SHA-256 in lower-case hex")
	}
	if e.QuerySHA256 != "" && !isSHA256Hex(e.QuerySHA256) {
		return memgate.FieldError("query_sha256", "must be a SHA-256 in lower-case hex, never the query")
	}
	for _, id := range e.MemoryIDs {
		if err := memgate.CheckIdent("memory_ids", id); err != nil {
			return err
		}
	}
	if len(e.Scores) > 0 && len(e.Scores) != len(e.MemoryIDs) {
		return memgate.FieldError("scores", "has %d values for %d memory ids; want one per id", len(e.Scores), len(e.MemoryIDs))
	}
	for _, s := range e.Scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return memgate.FieldError("scores", "must be finite")
		}
	}
	for k := range e.Counts {
		if err := memgate.CheckIdent("counts", k); err != nil {
			return err
		}
	}
	return nil
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// CheckIdempotencyKeys checks Remember's keys (or Supersede's, with next as
// the one memory) before any I/O: none, or one per memory; each non-empty
// Key well-formed with a lower-case hex SHA-256 of its request; and no two
// inputs asking for the same Key in the same partition. Errors name the
// input's index.
func CheckIdempotencyKeys(ms []*memgate.Memory, keys []IdempotencyKey) error {
	if len(keys) == 0 {
		return nil
	}
	if len(keys) != len(ms) {
		return memgate.FieldError("idempotency_key", "%d keys for %d memories: give one per memory or none", len(keys), len(ms))
	}
	type slot struct{ tenant, principal, agent, conversation, key string }
	seen := map[slot]bool{}
	for i, k := range keys {
		if k.Key == "" {
			continue
		}
		if err := memgate.CheckIdempotencyKey(fmt.Sprintf("memories[%d].idempotency_key", i), k.Key); err != nil {
			return err
		}
		if !isSHA256Hex(k.RequestSHA256) {
			return memgate.FieldError(fmt.Sprintf("memories[%d].idempotency_key", i), "needs the lower-case hex SHA-256 of its request")
		}
		m := ms[i]
		s := slot{m.Tenant, m.Principal, m.Agent, m.Conversation, k.Key}
		if seen[s] {
			return memgate.FieldError(fmt.Sprintf("memories[%d].idempotency_key", i), "is given twice in one call for the same partition")
		}
		seen[s] = true
	}
	return nil
}

// IdempotencyConflict is Remember's conflict (and Supersede's, as input 0
// of 1) for input i of n whose key was used for another request, or whose
// memory was since deleted (why).
// The field is "idempotency_key", or "memories[i].idempotency_key" in a
// call with several inputs.
func IdempotencyConflict(i, n int, why string) *memgate.Error {
	field := "idempotency_key"
	if n > 1 {
		field = fmt.Sprintf("memories[%d].idempotency_key", i)
	}
	return &memgate.Error{Code: memgate.ECONFLICT, Field: field, Message: why}
}

// ErrKeyHeld is the conflict of a keyed write whose key, in the write's
// key space (its source, at its level), is held by a memory the writer may
// not replace: a restricted one, for a writer that may not read restricted
// memories; or any, for a new version of another memory (which replaces
// only the memory it names).
// It names neither the memory nor why, so it tells the writer no more than
// any other conflict does.
func ErrKeyHeld() *memgate.Error {
	return &memgate.Error{Code: memgate.ECONFLICT, Field: "key", Message: "is held by a memory this write may not replace; use another key"}
}

// ItemError names input i of n in err's field (memories[i].field) when
// the write holds more than one input; err as it is otherwise, or when it
// is not a *memgate.Error.
func ItemError(i, n int, err error) error {
	me, ok := err.(*memgate.Error)
	if !ok || n <= 1 {
		return err
	}
	c := *me
	if c.Field != "" {
		c.Field = fmt.Sprintf("memories[%d].%s", i, c.Field)
	} else {
		c.Field = fmt.Sprintf("memories[%d]", i)
	}
	return &c
}

// Messages of IdempotencyConflict.
const (
	IdempotencyOtherRequest = "was already used for a different request; use a new key for a new request"
	IdempotencyDeleted      = "was used for a memory that has since been deleted"
)

// IdempotencyKeyAt is input i's key in Remember's or Supersede's keys
// (none when keys is empty).
func IdempotencyKeyAt(keys []IdempotencyKey, i int) IdempotencyKey {
	if len(keys) == 0 {
		return IdempotencyKey{}
	}
	return keys[i]
}

// PseudonymPrefix starts every pseudonym Forget writes in place of a
// forgotten principal.
const PseudonymPrefix = "forgotten:"

// AgentPseudonym is what Forget writes in place of the agent of a forgotten
// principal's audit events: PseudonymPrefix and 32 hex characters of the
// HMAC-SHA-256, under the database's key (Store.PseudonymKey), of the
// principal's pseudonym and the agent. Keyed, so a reader of the audit log
// who guesses agent names cannot confirm one; one per (forgotten person,
// agent), so the log still tells the person's agents apart, and cannot be
// matched with the agent's events for other people.
func AgentPseudonym(key []byte, pseudonym, agent string) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "agent:%d:%s/%s", len(pseudonym), pseudonym, agent)
	return PseudonymPrefix + hex.EncodeToString(m.Sum(nil)[:16])
}

// CheckPseudonym checks the pseudonym of a Forget: the prefix and 32
// lower-case hex characters (a keyed hash, never the principal).
func CheckPseudonym(p string) error {
	h, ok := strings.CutPrefix(p, PseudonymPrefix)
	if !ok || len(h) != 32 || !isLowerHexString(h) {
		return memgate.FieldError("pseudonym", "must be %q and 32 lower-case hex characters", PseudonymPrefix)
	}
	return nil
}

func isLowerHexString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
