package sqlstore

import (
	"fmt"
	"math"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// memoryColumns are the columns of a memory, in the order scanMemory reads
// and memoryArgs writes them (seq is read only: the database assigns it).
const memoryColumns = `id, tenant, principal, agent, conversation, kind, source, sensitivity,
	status, status_reason, content, reason, metadata, created_at, updated_at, expires_at,
	valid_from, valid_until, version, supersedes, superseded_by, content_sha256,
	embedding_provider, embedding_model, embedding_dim, embedding_vector,
	dedup_key, seen_count, flags, feedback_count, feedback_sum, created_by, updated_by, key,
	imported_status, imported_created_by, imported_updated_by`

// writeColumns are the columns memoryArgs writes: memoryColumns, then the
// content's terms for the recall index (store.ContentTerms), which only
// LoadIndex reads.
const writeColumns = memoryColumns + `, index_terms, terms_version`

const insertMemory = `INSERT INTO memories (` + writeColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
	?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// selectMemory reads memories; a statement appends its FROM clause.
const selectMemory = "SELECT " + memoryColumns + " FROM memories"

// MemoryColumns are the columns of a memory in the order of MemoryArgs,
// and MemoryArgs the values sqlstore binds for m: for drivers' tests that
// write rows of an older schema.
const MemoryColumns = memoryColumns

// MemoryArgs returns the values of MemoryColumns for m: memoryArgs(m)
// without the terms.
func MemoryArgs(m *memgate.Memory) ([]any, error) {
	args, err := memoryArgs(m)
	if err != nil {
		return nil, err
	}
	return args[:len(args)-2], nil
}

// memoryArgs returns the values of writeColumns for m, checked. A
// SeenCount of 0 is stored as 1: a memory has been seen at least once,
// when it was stored.
func memoryArgs(m *memgate.Memory) ([]any, error) {
	if err := store.CheckCounters(m); err != nil {
		return nil, err
	}
	md, err := store.EncodeMetadata(m.Metadata)
	if err != nil {
		return nil, err
	}
	provider, model, dim, vector := embeddingArgs(m.Embedding)
	terms, termsVersion := store.ContentTerms(m.Content)
	return []any{
		m.ID, m.Tenant, m.Principal, m.Agent, m.Conversation,
		string(m.Kind), string(m.Source), string(m.Sensitivity),
		string(m.Status), m.StatusReason, m.Content, m.Reason, md,
		m.CreatedAt.UTC(), m.UpdatedAt.UTC(), m.ExpiresAt, m.ValidFrom, m.ValidUntil,
		m.Version, m.Supersedes, m.SupersededBy, m.ContentSHA256,
		provider, model, dim, vector,
		m.DedupKey, max(m.SeenCount, 1), flagsArg(m.Flags), m.Feedback.Count, m.Feedback.Sum,
		m.CreatedBy, m.UpdatedBy, m.Key,
		string(m.ImportedStatus), m.ImportedCreatedBy, m.ImportedUpdatedBy,
		terms, termsVersion,
	}, nil
}

// asStored returns m as a read of its row after memoryArgs(m) was
// inserted returns it (scanMemory): a copy (Clone: metadata through JSON
// with exact numbers, as stored), times in UTC, a seen count of at least
// 1, no flags as nil, and nothing of what is not stored (Expired,
// KeyHidesRestricted). It returns nil when a read could return something
// else, which each backend decides for itself: a time that is not a whole
// number of microseconds (SQLite truncates, PostgreSQL rounds), a
// feedback sum of negative zero (SQLite may read it back as zero), a flag
// that is not valid UTF-8 (stored as JSON).
func asStored(m *memgate.Memory) *memgate.Memory {
	for _, t := range []*time.Time{&m.CreatedAt, &m.UpdatedAt, m.ExpiresAt, m.ValidFrom, m.ValidUntil} {
		if t != nil && t.Nanosecond()%1000 != 0 {
			return nil
		}
	}
	if m.Feedback.Sum == 0 && math.Signbit(m.Feedback.Sum) {
		return nil
	}
	for _, f := range m.Flags {
		if !utf8.ValidString(f) {
			return nil
		}
	}
	c := m.Clone()
	c.Expired, c.KeyHidesRestricted = false, false
	c.SeenCount = max(c.SeenCount, 1)
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	c.ExpiresAt, c.ValidFrom, c.ValidUntil = utc(c.ExpiresAt), utc(c.ValidFrom), utc(c.ValidUntil)
	c.Flags = nil
	if len(m.Flags) > 0 {
		c.Flags = slices.Clone(m.Flags)
	}
	return c
}

// scanMemory reads one row of memoryColumns, preceded by a sequence
// number (seq or change_seq) when withSeq.
func scanMemory(row interface{ Scan(...any) error }, withSeq bool) (m *memgate.Memory, seq int64, err error) {
	m = new(memgate.Memory)
	var (
		kind, source, sensitivity, status string
		importedStatus                    string
		metadata                          []byte
		vector                            vectorDest
		provider, model                   *string
		dim                               *int64
		flags                             []string
	)
	dest := []any{
		&m.ID, &m.Tenant, &m.Principal, &m.Agent, &m.Conversation,
		&kind, &source, &sensitivity,
		&status, &m.StatusReason, &m.Content, &m.Reason, &metadata,
		&m.CreatedAt, &m.UpdatedAt, &m.ExpiresAt, &m.ValidFrom, &m.ValidUntil,
		&m.Version, &m.Supersedes, &m.SupersededBy, &m.ContentSHA256,
		&provider, &model, &dim, &vector,
		&m.DedupKey, &m.SeenCount, &flags, &m.Feedback.Count, &m.Feedback.Sum,
		&m.CreatedBy, &m.UpdatedBy, &m.Key,
		&importedStatus, &m.ImportedCreatedBy, &m.ImportedUpdatedBy,
	}
	if withSeq {
		dest = append([]any{&seq}, dest...)
	}
	if err := row.Scan(dest...); err != nil {
		return nil, 0, err
	}
	m.Kind = memgate.Kind(kind)
	m.Source = memgate.Source(source)
	m.Sensitivity = memgate.Sensitivity(sensitivity)
	m.Status = memgate.Status(status)
	m.ImportedStatus = memgate.Status(importedStatus)
	if metadata != nil {
		if m.Metadata, err = memgate.DecodeMetadata(metadata); err != nil {
			return nil, 0, fmt.Errorf("memory %s: stored metadata is not a JSON object", m.ID)
		}
	}
	if len(flags) > 0 {
		m.Flags = flags
	}
	if provider != nil {
		if vector.err != nil {
			return nil, 0, fmt.Errorf("memory %s: %w", m.ID, vector.err)
		}
		e := &memgate.Embedding{Provider: *provider, Vector: vector.v}
		if model != nil {
			e.Model = *model
		}
		if dim != nil {
			e.Dim = int(*dim)
		}
		m.Embedding = e
	}
	return m, seq, nil
}

// vectorDest scans a stored vector (store.EncodeVector's bytes, or NULL)
// and decodes it as it is scanned: scanned into a []byte, database/sql
// copied the driver's bytes first, only for DecodeVector to copy them
// again (an allocation of every vector a recall's verified read returns).
// A vector that does not decode is kept as err, reported by scanMemory
// with the memory's id.
type vectorDest struct {
	v   []float32
	err error
}

// Scan implements sql.Scanner (which pgx honours too). src is read here
// and not kept: a driver may reuse it after Scan returns.
func (d *vectorDest) Scan(src any) error {
	switch b := src.(type) {
	case nil:
		d.v, d.err = nil, nil
	case []byte:
		d.v, d.err = store.DecodeVector(b)
	case string:
		d.v, d.err = store.DecodeVector([]byte(b))
	default:
		return fmt.Errorf("stored vector is %T, not bytes", src)
	}
	return nil
}

// collect returns a function that reads every row of a query's result
// with scan: collect(scan)(q.Query(...)).
func collect[T any](scan func(Rows) (T, error)) func(Rows, error) ([]T, error) {
	return func(rows Rows, err error) ([]T, error) {
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		out := []T{}
		for rows.Next() {
			v, err := scan(rows)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, rows.Err()
	}
}

func scanOneMemory(r Rows) (*memgate.Memory, error) {
	m, _, err := scanMemory(r, false)
	return m, err
}

// flagsArg returns flags, or nil (NULL) when there are none: nil and empty
// both mean "no findings" and read back as nil.
func flagsArg(flags []string) any {
	if len(flags) == 0 {
		return nil
	}
	return flags
}

// embeddingArgs returns the embedding columns; all NULL for nil. The
// vector is store.EncodeVector's bytes, as every backend stores it.
func embeddingArgs(e *memgate.Embedding) (provider, model, dim, vector any) {
	if e == nil {
		return nil, nil, nil, nil
	}
	return e.Provider, e.Model, int64(e.Dim), store.EncodeVector(e.Vector)
}

// utc is t in UTC, or nil.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
