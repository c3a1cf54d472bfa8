package sqlite

import (
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"modernc.org/sqlite"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// memoryColumns are the columns of a memory, in the order scanMemory reads
// and memoryArgs writes them (seq is read only: SQLite assigns it).
const memoryColumns = `id, tenant, principal, agent, conversation, kind, source, sensitivity,
	status, status_reason, content, reason, metadata, created_at, updated_at, expires_at,
	valid_from, valid_until, version, supersedes, superseded_by, content_sha256,
	embedding_provider, embedding_model, embedding_dim, embedding_vector,
	dedup_key, seen_count, flags, feedback_count, feedback_sum, created_by, updated_by`

const insertMemory = `INSERT INTO memories (` + memoryColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
	?, ?, ?, ?, ?, ?, ?)`

// lowerFunc is a SQL function that lower-cases text with Unicode rules (the
// built-in lower() folds ASCII only), for case-insensitive literal search.
const lowerFunc = "memgate_lower"

func init() {
	sqlite.MustRegisterDeterministicScalarFunction(lowerFunc, 1,
		func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			switch v := args[0].(type) {
			case string:
				return strings.ToLower(v), nil
			case []byte:
				return strings.ToLower(string(v)), nil
			case nil:
				return nil, nil
			default:
				return nil, fmt.Errorf("%s: want text, got %T", lowerFunc, v)
			}
		})
}

// memoryArgs returns the values of memoryColumns for m. A SeenCount of 0
// is stored as 1: a memory has been seen at least once, when it was stored.
func memoryArgs(m *memgate.Memory) ([]any, error) {
	if err := store.CheckCounters(m); err != nil {
		return nil, err
	}
	md, err := store.EncodeMetadata(m.Metadata)
	if err != nil {
		return nil, err
	}
	flags, err := encodeFlags(m.Flags)
	if err != nil {
		return nil, err
	}
	provider, model, dim, vector := encodeEmbedding(m.Embedding)
	return []any{
		m.ID, m.Tenant, m.Principal, m.Agent, m.Conversation,
		string(m.Kind), string(m.Source), string(m.Sensitivity),
		string(m.Status), m.StatusReason, m.Content, m.Reason, md,
		micros(m.CreatedAt), micros(m.UpdatedAt),
		optMicros(m.ExpiresAt), optMicros(m.ValidFrom), optMicros(m.ValidUntil),
		m.Version, m.Supersedes, m.SupersededBy, m.ContentSHA256,
		provider, model, dim, vector,
		m.DedupKey, max(m.SeenCount, 1), flags, m.Feedback.Count, m.Feedback.Sum,
		m.CreatedBy, m.UpdatedBy,
	}, nil
}

type scanner interface{ Scan(dest ...any) error }

// scanMemory reads one row of memoryColumns, preceded by seq when withSeq.
func scanMemory(row scanner, withSeq bool) (m *memgate.Memory, seq int64, err error) {
	m = new(memgate.Memory)
	var (
		kind, source, sensitivity, status string
		metadata, provider, model, flags  sql.NullString
		createdAt, updatedAt              int64
		expiresAt, validFrom, validUntil  sql.NullInt64
		dim                               sql.NullInt64
		vector                            []byte
	)
	dest := []any{
		&m.ID, &m.Tenant, &m.Principal, &m.Agent, &m.Conversation,
		&kind, &source, &sensitivity,
		&status, &m.StatusReason, &m.Content, &m.Reason, &metadata,
		&createdAt, &updatedAt, &expiresAt, &validFrom, &validUntil,
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
	m.CreatedAt = fromMicros(createdAt)
	m.UpdatedAt = fromMicros(updatedAt)
	m.ExpiresAt = optFromMicros(expiresAt)
	m.ValidFrom = optFromMicros(validFrom)
	m.ValidUntil = optFromMicros(validUntil)
	if metadata.Valid {
		if m.Metadata, err = memgate.DecodeMetadata([]byte(metadata.String)); err != nil {
			return nil, 0, fmt.Errorf("memory %s: stored metadata is not a JSON object", m.ID)
		}
	}
	if flags.Valid {
		if err := json.Unmarshal([]byte(flags.String), &m.Flags); err != nil {
			return nil, 0, fmt.Errorf("memory %s: stored flags are not a JSON array of strings", m.ID)
		}
	}
	if provider.Valid {
		v, err := store.DecodeVector(vector)
		if err != nil {
			return nil, 0, fmt.Errorf("memory %s: %w", m.ID, err)
		}
		m.Embedding = &memgate.Embedding{Provider: provider.String, Model: model.String, Dim: int(dim.Int64), Vector: v}
	}
	return m, seq, nil
}

// micros is t as unix microseconds: the precision every backend keeps.
func micros(t time.Time) int64 { return t.UnixMicro() }

func optMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func optFromMicros(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

// encodeFlags returns flags as a JSON array, or nil (NULL) when there are
// none: nil and empty both mean "no findings" and read back as nil.
func encodeFlags(flags []string) (any, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(flags)
	if err != nil {
		return nil, memgate.FieldError("flags", "must be serializable as JSON")
	}
	return string(b), nil
}

// encodeEmbedding returns the embedding columns; all NULL for nil.
func encodeEmbedding(e *memgate.Embedding) (provider, model, dim, vector any) {
	if e == nil {
		return nil, nil, nil, nil
	}
	return e.Provider, e.Model, int64(e.Dim), store.EncodeVector(e.Vector)
}
