package sqlstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/analysis"
	"github.com/memgate/memgate/store"
)

// LoadPartition implements store.Store.
func (s *Store) LoadPartition(ctx context.Context, tenant, principal string) ([]*memgate.Memory, error) {
	if err := (memgate.Scope{Tenant: tenant, Principal: principal}).Validate(); err != nil {
		return nil, err
	}
	return read(ctx, s, "load partition", func(q Querier) ([]*memgate.Memory, error) {
		return collect(scanOneMemory)(q.Query(ctx, selectMemory+" WHERE tenant = ? AND principal = ? AND status = 'active' ORDER BY seq", tenant, principal))
	})
}

// loadIndexSQL reads the compact columns of a partition for LoadIndex:
// the content only when the stored terms are not of this binary's
// analysis, so a current row reads no text but its filter fields. The
// vector and the terms are read as they are stored, whatever their model
// or version (a flag says whether the vector is of the model asked for):
// inside a CASE their width is unknown to PostgreSQL's planner, which then
// took a partition that is most of its table for a few hundred kB and
// sorted it after a sequential scan (on disk: past work_mem) instead of
// reading it in seq order from an index (postgres.TestLoadIndexPlan).
const loadIndexSQL = `SELECT id, agent, conversation, kind, source, sensitivity,
	created_at, expires_at, valid_from, valid_until, embedding_vector,
	CASE WHEN embedding_provider = ? AND embedding_model = ? AND embedding_dim = ? THEN 1 ELSE 0 END,
	index_terms, CASE WHEN terms_version = ? THEN NULL ELSE content END
	FROM memories WHERE tenant = ? AND principal = ? AND status = 'active' ORDER BY seq`

// fillTermsSQL writes back the terms LoadIndex made from a row's content,
// unless the content changed since it was read. Like any write to a
// memory's row, it raises the partition's head (0006_changes): a reader
// catches up with the filled rows once, reading them in full.
const fillTermsSQL = `UPDATE memories SET index_terms = ?, terms_version = ?
	WHERE tenant = ? AND principal = ? AND id = ? AND content = ? AND (terms_version IS NULL OR terms_version <> ?)`

// maxFill bounds the rows LoadIndex writes back in one transaction.
const maxFill = 500

// fnError carries LoadIndex's callback error through the driver, which
// would otherwise interpret an error it does not know as internal.
type fnError struct{ err error }

func (e *fnError) Error() string { return e.err.Error() }

// LoadIndex implements store.Store. Every text is scanned borrowed: the
// filter fields of a partition repeat (kinds, sources, agents,
// conversations), so each is made a string once per load, and only the id
// is allocated for every row.
func (s *Store) LoadIndex(ctx context.Context, tenant, principal string, model store.EmbeddingModel, fn func(*store.IndexRow) error) error {
	if err := (memgate.Scope{Tenant: tenant, Principal: principal}).Validate(); err != nil {
		return err
	}
	type fill struct{ id, content string }
	var fills []fill
	var (
		row                                 store.IndexRow
		id, agent, conv, kind, source, sens Borrowed
		created                             time.Time
		expires, validFrom, validUntil      *time.Time
		vector, terms, content              Borrowed // decoded before the next row
		ofModel                             int64
		version                             = analysis.TermsVersion
		fnErr                               *fnError
		texts                               = map[string]string{}
	)
	text := func(b Borrowed) string {
		if t, ok := texts[string(b)]; ok {
			return t
		}
		t := string(b)
		if len(texts) < maxTexts {
			texts[t] = t
		}
		return t
	}
	_, err := read(ctx, s, "load index", func(q Querier) (struct{}, error) {
		args := []any{model.Provider, model.Model, int64(model.Dim), version, tenant, principal}
		var rows Rows
		var err error
		if st, ok := s.d.(Streamer); ok {
			rows, err = st.Stream(ctx, loadIndexSQL, args...)
		} else {
			rows, err = q.Query(ctx, loadIndexSQL, args...)
		}
		if err != nil {
			return struct{}{}, err
		}
		defer rows.Close()
		// One slice of destinations for every row: Scan is an interface
		// method, so a slice made at each call escaped, an allocation a row.
		dest := []any{&id, &agent, &conv, &kind, &source, &sens,
			&created, &expires, &validFrom, &validUntil, &vector, &ofModel, &terms, &content}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				return struct{}{}, err
			}
			row.ID = string(id)
			row.Agent, row.Conversation = text(agent), text(conv)
			row.Kind, row.Source, row.Sensitivity = memgate.Kind(text(kind)), memgate.Source(text(source)), memgate.Sensitivity(text(sens))
			row.CreatedAt, row.ExpiresAt, row.ValidFrom, row.ValidUntil = micros(&created), micros(expires), micros(validFrom), micros(validUntil)
			row.Vector = row.Vector[:0]
			if ofModel == 1 && vector != nil {
				if row.Vector, err = store.DecodeVectorInto(row.Vector, vector); err != nil {
					return struct{}{}, fmt.Errorf("memory %s: %w", row.ID, err)
				}
			}
			if model.Dim == 0 || len(row.Vector) != model.Dim {
				row.Vector = nil
			}
			row.Terms = row.Terms[:0]
			switch {
			case content != nil:
				c := string(content)
				row.Terms = analysis.AppendTerms(row.Terms, c)
				fills = append(fills, fill{row.ID, c})
			case terms != nil:
				if row.Terms, err = store.DecodeTerms(row.Terms, terms); err != nil {
					return struct{}{}, fmt.Errorf("memory %s: %w", row.ID, err)
				}
			}
			if err := fn(&row); err != nil {
				fnErr = &fnError{err}
				return struct{}{}, fnErr
			}
		}
		return struct{}{}, rows.Err()
	})
	if fnErr != nil {
		return fnErr.err
	}
	if err != nil {
		return err
	}
	// Best effort: a row not filled is analysed again by the next load.
	for len(fills) > 0 {
		n := min(len(fills), maxFill)
		err := s.d.Write(ctx, "fill index terms", func(q Querier) error {
			for _, f := range fills[:n] {
				b, v := store.ContentTerms(f.content)
				if _, err := q.Exec(ctx, fillTermsSQL, b, v, tenant, principal, f.id, f.content, v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			break
		}
		fills = fills[n:]
	}
	return nil
}

// maxTexts bounds the distinct filter values LoadIndex keeps to share
// between rows; past it, a value is made a string for each row.
const maxTexts = 4096

// micros is t as Unix microseconds, 0 for nil.
func micros(t *time.Time) int64 {
	if t == nil {
		return 0
	}
	return t.UnixMicro()
}

// Fetch implements store.Store: scope, ids and every predicate of the read
// gate are one statement, so what it returns is what passed them all.
func (s *Store) Fetch(ctx context.Context, sc memgate.Scope, ids []string, g store.ReadGate) ([]*memgate.Memory, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if len(ids) > store.MaxFetch {
		return nil, memgate.FieldError("ids", "holds %d ids, the limit is %d", len(ids), store.MaxFetch)
	}
	if g.Now.IsZero() || g.AsOf.IsZero() {
		return nil, memgate.FieldError("now", "and as_of are required")
	}
	if len(ids) == 0 {
		return nil, nil
	}
	b, err := s.gateQuery(sc, ids, g)
	if err != nil {
		return nil, err
	}
	return read(ctx, s, "fetch", func(q Querier) ([]*memgate.Memory, error) {
		if l, ok := s.d.(Looker); ok {
			return collect(scanOneMemory)(l.Lookup(ctx, b.String(), b.Args()...))
		}
		return collect(scanOneMemory)(q.Query(ctx, b.String(), b.Args()...))
	})
}

// gateQuery builds the Fetch statement. The principal and the status are
// written with Dialect.ByID, so the planner looks each id up by (tenant,
// id) instead of walking the partition through an index that leads with
// the principal, or a partial one whose predicate the status implies; both
// are still compared on every row. Without them PostgreSQL walks the
// partition until the table's first ANALYZE (after a bulk import, until
// autovacuum comes by): 47–109 ms at 10k rows against 0.3–1.4 ms.
func (s *Store) gateQuery(sc memgate.Scope, ids []string, g store.ReadGate) (*Query, error) {
	b := new(Query)
	b.SQL(selectMemory, " WHERE ").scope(sc, "", s.dl.ByID)
	In(b.SQL(" AND "), "id", ids)
	now, asOf := g.Now.UTC(), g.AsOf.UTC()
	b.SQL(" AND ", s.dl.ByID("status"), " = 'active' AND (expires_at IS NULL OR (expires_at > ", b.Arg(now), " AND expires_at > ", b.Arg(asOf), "))")
	b.SQL(" AND (valid_from IS NULL OR valid_from <= ", b.Arg(asOf), ") AND (valid_until IS NULL OR valid_until > ", b.Arg(asOf), ")")
	if !g.IncludeRestricted {
		b.SQL(" AND sensitivity = 'standard'")
	}
	if len(g.Kinds) > 0 {
		In(b.SQL(" AND "), "kind", g.Kinds)
	}
	if len(g.Sources) > 0 {
		In(b.SQL(" AND "), "source", g.Sources)
	}
	for _, k := range slices.Sorted(maps.Keys(g.Metadata)) { // one text per set of keys
		cond, err := s.dl.MetadataEquals(b, k, g.Metadata[k])
		if err != nil {
			return nil, memgate.FieldError("metadata."+k, "%s", err.Error())
		}
		b.SQL(" AND ", cond)
	}
	return b, nil
}
