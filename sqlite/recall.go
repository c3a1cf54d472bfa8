package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// LoadPartition implements store.Store.
func (db *DB) LoadPartition(ctx context.Context, tenant, principal string) ([]*memgate.Memory, error) {
	s := memgate.Scope{Tenant: tenant, Principal: principal}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	r, err := db.reader()
	if err != nil {
		return nil, err
	}
	rows, err := r.QueryContext(ctx, "SELECT "+memoryColumns+" FROM memories WHERE tenant = ? AND principal = ? AND status = 'active' ORDER BY seq", tenant, principal)
	if err != nil {
		return nil, interpretError(ctx, "load partition", err)
	}
	defer rows.Close()
	var out []*memgate.Memory
	for rows.Next() {
		m, _, err := scanMemory(rows, false)
		if err != nil {
			return nil, interpretError(ctx, "load partition", err)
		}
		out = append(out, m)
	}
	return out, interpretError(ctx, "load partition", rows.Err())
}

// Fetch implements store.Store.
func (db *DB) Fetch(ctx context.Context, s memgate.Scope, ids []string, g store.ReadGate) ([]*memgate.Memory, error) {
	if err := s.Validate(); err != nil {
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
	r, err := db.reader()
	if err != nil {
		return nil, err
	}
	where, args := fetchScopeSQL(s)
	q, args, err := gateSQL(where, args, ids, g)
	if err != nil {
		return nil, err
	}
	rows, err := db.queryCached(ctx, r, q, args)
	if err != nil {
		return nil, interpretError(ctx, "fetch", err)
	}
	defer rows.Close()
	out := make([]*memgate.Memory, 0, len(ids))
	for rows.Next() {
		m, _, err := scanMemory(rows, false)
		if err != nil {
			return nil, interpretError(ctx, "fetch", err)
		}
		out = append(out, m)
	}
	return out, interpretError(ctx, "fetch", rows.Err())
}

// fetchScopeSQL is scopeSQL for lookups by id: a unary + on the principal
// keeps the planner from walking the whole partition through its principal
// index instead of looking each id up in the (tenant, id) unique index. The
// principal is still compared on every row.
func fetchScopeSQL(s memgate.Scope) (string, []any) {
	where, args := scopeSQL(s)
	return strings.Replace(where, "principal = ?", "+principal = ?", 1), args
}

// gateSQL builds the Fetch query: scope, ids and the read gate in one
// statement.
func gateSQL(where string, args []any, ids []string, g store.ReadGate) (string, []any, error) {
	var q strings.Builder
	q.WriteString("SELECT " + memoryColumns + " FROM memories WHERE " + where)
	// The id list is padded (with its first id) to a bucket size, so that
	// recall issues few distinct statements and each is prepared once.
	n := idBucket(len(ids))
	q.WriteString(" AND id IN (" + placeholders(n) + ")")
	for i := range n {
		args = append(args, ids[min(i, len(ids)-1)])
	}
	now, asOf := micros(g.Now), micros(g.AsOf)
	q.WriteString(" AND status = 'active' AND (expires_at IS NULL OR (expires_at > ? AND expires_at > ?))")
	q.WriteString(" AND (valid_from IS NULL OR valid_from <= ?) AND (valid_until IS NULL OR valid_until > ?)")
	args = append(args, now, asOf, asOf, asOf)
	if !g.IncludeRestricted {
		q.WriteString(" AND sensitivity = 'standard'")
	}
	if len(g.Kinds) > 0 {
		q.WriteString(" AND kind IN (" + placeholders(len(g.Kinds)) + ")")
		for _, k := range g.Kinds {
			args = append(args, string(k))
		}
	}
	if len(g.Sources) > 0 {
		q.WriteString(" AND source IN (" + placeholders(len(g.Sources)) + ")")
		for _, src := range g.Sources {
			args = append(args, string(src))
		}
	}
	for k, v := range g.Metadata {
		cond, val, err := metadataCond(v)
		if err != nil {
			return "", nil, memgate.FieldError("metadata."+k, "%s", err.Error())
		}
		// The key and value are bound parameters: neither is ever part of
		// the SQL text or of a JSON path.
		q.WriteString(" AND EXISTS (SELECT 1 FROM json_each(memories.metadata) j WHERE j.key = ? AND " + cond + ")")
		args = append(args, k)
		if val != nil {
			args = append(args, val)
		}
	}
	return q.String(), args, nil
}

// metadataCond returns the json_each condition matching v by type and value.
func metadataCond(v any) (cond string, val any, err error) {
	switch x := v.(type) {
	case string:
		return "j.type = 'text' AND j.value = ?", x, nil
	case bool:
		if x {
			return "j.type = 'true'", nil, nil
		}
		return "j.type = 'false'", nil, nil
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return "j.type IN ('integer', 'real') AND j.value = ?", n, nil
		}
		f, err := x.Float64()
		if err != nil {
			return "", nil, fmt.Errorf("is not a number")
		}
		return "j.type IN ('integer', 'real') AND j.value = ?", f, nil
	case float64:
		return "j.type IN ('integer', 'real') AND j.value = ?", x, nil
	case int:
		return "j.type IN ('integer', 'real') AND j.value = ?", x, nil
	case int64:
		return "j.type IN ('integer', 'real') AND j.value = ?", x, nil
	}
	return "", nil, fmt.Errorf("must be a string, a boolean or a number")
}

// idBucket rounds n up to the next of 8, 16, 32, ... (at most store.MaxFetch).
func idBucket(n int) int {
	b := 8
	for b < n {
		b *= 2
	}
	return min(b, max(n, store.MaxFetch))
}

// maxCachedStatements bounds the statements kept for Fetch: the query text
// depends on the id bucket and on which gate filters are set, so the set
// is small in practice; beyond the bound, statements are prepared per call.
const maxCachedStatements = 256

// queryCached runs q through a cached prepared statement on the read pool.
func (db *DB) queryCached(ctx context.Context, r *sql.DB, q string, args []any) (*sql.Rows, error) {
	db.stmts.mu.Lock()
	n := len(db.stmts.stmts)
	db.stmts.mu.Unlock()
	if n >= maxCachedStatements {
		return r.QueryContext(ctx, q, args...)
	}
	stmt, err := db.stmts.get(ctx, r, q)
	if err != nil {
		return nil, err
	}
	return stmt.QueryContext(ctx, args...)
}
