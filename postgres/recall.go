package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

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
	rows, err := r.Query(ctx, "SELECT "+memoryColumns+" FROM memories WHERE tenant = $1 AND principal = $2 AND status = 'active' ORDER BY seq", tenant, principal)
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

// Fetch implements store.Store: scope, ids and every predicate of the read
// gate are one statement, so what it returns is what passed them all.
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
	q, err := gateQuery(s, ids, g)
	if err != nil {
		return nil, err
	}
	r, err := db.reader()
	if err != nil {
		return nil, err
	}
	rows, err := r.Query(ctx, q.String(), q.args...)
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

// gateQuery builds the Fetch statement: scope, ids and the read gate.
func gateQuery(s memgate.Scope, ids []string, g store.ReadGate) (*query, error) {
	q := new(query)
	q.sql("SELECT ", memoryColumns, " FROM memories WHERE ").scope(s, "")
	q.sql(" AND id = ANY(", q.arg(ids), "::text[])")
	now, asOf := q.arg(ts(g.Now)), q.arg(ts(g.AsOf))
	q.sql(" AND status = 'active' AND (expires_at IS NULL OR (expires_at > ", now, " AND expires_at > ", asOf, "))")
	q.sql(" AND (valid_from IS NULL OR valid_from <= ", asOf, ") AND (valid_until IS NULL OR valid_until > ", asOf, ")")
	if !g.IncludeRestricted {
		q.sql(" AND sensitivity = 'standard'")
	}
	if len(g.Kinds) > 0 {
		q.sql(" AND kind = ANY(", q.arg(kindStrings(g.Kinds)), "::text[])")
	}
	if len(g.Sources) > 0 {
		q.sql(" AND source = ANY(", q.arg(sourceStrings(g.Sources)), "::text[])")
	}
	for k, v := range g.Metadata {
		if err := metadataCond(q, k, v); err != nil {
			return nil, memgate.FieldError("metadata."+k, "%s", err.Error())
		}
	}
	return q, nil
}

// metadataCond writes the condition "metadata holds key k with a value
// equal to v, of the same JSON type". The key and the value are bound
// parameters: neither is ever part of the SQL text or of a JSON path.
//
// The column is json (its text kept as written), compared with json
// operators: a string through ->> (unescaped), a boolean or a number
// through its JSON text (a number as numeric, so 12345678901234567 is
// exact and 3 equals 3.0). CASE fixes the order of evaluation: a value is
// unescaped or cast only once its type is known. A stored string holding
// \u0000 (which text cannot hold) never equals a query value.
func metadataCond(q *query, k string, v any) error {
	val := "(metadata -> " + q.arg(k) + "::text)"
	switch x := v.(type) {
	case string:
		q.sql(" AND CASE WHEN json_typeof(", val, ") = 'string' AND strpos(", val, "::text, ", q.arg(`\u0000`), "::text) = 0",
			" THEN (metadata ->> ", q.arg(k), "::text) = ", q.arg(x), "::text ELSE false END")
		return nil
	case bool:
		q.sql(" AND json_typeof(", val, ") = 'boolean' AND ", val, "::text = ", q.arg(strconv.FormatBool(x)), "::text")
		return nil
	}
	var num string
	switch x := v.(type) {
	case json.Number:
		if _, err := strconv.ParseFloat(x.String(), 64); err != nil || !json.Valid([]byte(x.String())) {
			return fmt.Errorf("is not a number")
		}
		num = x.String()
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("must be a finite number")
		}
		num = strconv.FormatFloat(x, 'g', -1, 64)
	case int:
		num = strconv.Itoa(x)
	case int64:
		num = strconv.FormatInt(x, 10)
	default:
		return fmt.Errorf("must be a string, a boolean or a number")
	}
	q.sql(" AND CASE WHEN json_typeof(", val, ") = 'number' THEN ", val, "::text::numeric = ", q.arg(num), "::numeric ELSE false END")
	return nil
}
