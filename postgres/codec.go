package postgres

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// memoryColumns are the columns of a memory, in the order scanMemory reads
// and memoryArgs writes them (seq is read only: the identity assigns it).
const memoryColumns = `id, tenant, principal, agent, conversation, kind, source, sensitivity,
	status, status_reason, content, reason, metadata, created_at, updated_at, expires_at,
	valid_from, valid_until, version, supersedes, superseded_by, content_sha256,
	embedding_provider, embedding_model, embedding_dim, embedding_vector,
	dedup_key, seen_count, flags, feedback_count, feedback_sum, created_by, updated_by`

const insertMemory = `INSERT INTO memories (` + memoryColumns + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
	$21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33)`

// memoryArgs returns the values of memoryColumns for m. A SeenCount of 0
// is stored as 1: a memory has been seen at least once, when it was stored.
// The metadata is store.EncodeMetadata's JSON text: the column is json,
// which keeps that text exactly.
func memoryArgs(m *memgate.Memory) ([]any, error) {
	if err := store.CheckCounters(m); err != nil {
		return nil, err
	}
	md, err := store.EncodeMetadata(m.Metadata)
	if err != nil {
		return nil, err
	}
	provider, model, dim, vector := encodeEmbedding(m.Embedding)
	return []any{
		m.ID, m.Tenant, m.Principal, m.Agent, m.Conversation,
		string(m.Kind), string(m.Source), string(m.Sensitivity),
		string(m.Status), m.StatusReason, m.Content, m.Reason, md,
		ts(m.CreatedAt), ts(m.UpdatedAt),
		optTS(m.ExpiresAt), optTS(m.ValidFrom), optTS(m.ValidUntil),
		m.Version, m.Supersedes, m.SupersededBy, m.ContentSHA256,
		provider, model, dim, vector,
		m.DedupKey, max(m.SeenCount, 1), encodeFlags(m.Flags), m.Feedback.Count, m.Feedback.Sum,
		m.CreatedBy, m.UpdatedBy,
	}, nil
}

type scanner interface{ Scan(dest ...any) error }

// scanMemory reads one row of memoryColumns, preceded by seq when withSeq.
func scanMemory(row scanner, withSeq bool) (m *memgate.Memory, seq int64, err error) {
	m = new(memgate.Memory)
	var (
		kind, source, sensitivity, status string
		metadata                          []byte
		provider, model                   *string
		expiresAt, validFrom, validUntil  *time.Time
		dim                               *int32
		vector                            []byte
		flags                             []string
	)
	dest := []any{
		&m.ID, &m.Tenant, &m.Principal, &m.Agent, &m.Conversation,
		&kind, &source, &sensitivity,
		&status, &m.StatusReason, &m.Content, &m.Reason, &metadata,
		&m.CreatedAt, &m.UpdatedAt, &expiresAt, &validFrom, &validUntil,
		&m.Version, &m.Supersedes, &m.SupersededBy, &m.ContentSHA256,
		&provider, &model, &dim, &vector,
		&m.DedupKey, &m.SeenCount, &flags, &m.Feedback.Count, &m.Feedback.Sum,
		&m.CreatedBy, &m.UpdatedBy,
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
	m.CreatedAt = m.CreatedAt.UTC()
	m.UpdatedAt = m.UpdatedAt.UTC()
	m.ExpiresAt, m.ValidFrom, m.ValidUntil = optTS(expiresAt), optTS(validFrom), optTS(validUntil)
	if metadata != nil {
		if m.Metadata, err = memgate.DecodeMetadata(metadata); err != nil {
			return nil, 0, fmt.Errorf("memory %s: stored metadata is not a JSON object", m.ID)
		}
	}
	if len(flags) > 0 {
		m.Flags = flags
	}
	if provider != nil {
		v, err := store.DecodeVector(vector)
		if err != nil {
			return nil, 0, fmt.Errorf("memory %s: %w", m.ID, err)
		}
		var d int
		if dim != nil {
			d = int(*dim)
		}
		m.Embedding = &memgate.Embedding{Provider: *provider, Model: deref(model), Dim: d, Vector: v}
	}
	return m, seq, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ts is t as stored: UTC (timestamptz keeps microseconds; the engine has
// truncated to them already).
func ts(t time.Time) time.Time { return t.UTC() }

func optTS(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// encodeFlags returns flags, or nil (NULL) when there are none: nil and
// empty both mean "no findings" and read back as nil.
func encodeFlags(flags []string) any {
	if len(flags) == 0 {
		return nil
	}
	return flags
}

// encodeEmbedding returns the embedding columns; all NULL for nil. The
// vector is store.EncodeVector's bytes, as every backend stores it.
func encodeEmbedding(e *memgate.Embedding) (provider, model, dim, vector any) {
	if e == nil {
		return nil, nil, nil, nil
	}
	return e.Provider, e.Model, int32(e.Dim), store.EncodeVector(e.Vector)
}

// query builds a statement with numbered parameters: every value a caller
// gives is bound, never written into the SQL text.
type query struct {
	b    strings.Builder
	args []any
}

// arg binds v and returns its placeholder.
func (q *query) arg(v any) string {
	q.args = append(q.args, v)
	return "$" + strconv.Itoa(len(q.args))
}

func (q *query) sql(s ...string) *query {
	for _, p := range s {
		q.b.WriteString(p)
	}
	return q
}

func (q *query) String() string { return q.b.String() }

// scope writes the predicate that confines a statement to s. Every
// statement that touches memories for a caller includes it, so scope is
// applied by PostgreSQL and never after reading. s must be valid. alias
// qualifies the columns ("" for none).
func (q *query) scope(s memgate.Scope, alias string) *query {
	c := func(col string) string {
		if alias == "" {
			return col
		}
		return alias + "." + col
	}
	q.sql(c("tenant"), " = ", q.arg(s.Tenant))
	if !s.AllPrincipals {
		q.sql(" AND ", c("principal"), " = ", q.arg(s.Principal))
	}
	// A memory stored at the wider level (empty agent or conversation) is
	// visible from every narrower one; an empty request field sees them all.
	switch {
	case s.ExactAgent:
		q.sql(" AND ", c("agent"), " = ", q.arg(s.Agent))
	case s.Agent != "":
		q.sql(" AND ", c("agent"), " IN ('', ", q.arg(s.Agent), ")")
	}
	if s.Conversation != "" {
		q.sql(" AND ", c("conversation"), " IN ('', ", q.arg(s.Conversation), ")")
	}
	if s.HideRestricted {
		q.sql(" AND ", c("sensitivity"), " = 'standard'")
	}
	return q
}
