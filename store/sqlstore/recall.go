package sqlstore

import (
	"context"
	"maps"
	"slices"

	"github.com/memgate/memgate"
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
		return collect(scanOneMemory)(q.Query(ctx, b.String(), b.Args()...))
	})
}

// gateQuery builds the Fetch statement. The principal is written with
// Dialect.ByID, so the planner looks each id up by (tenant, id) instead of
// walking the partition; it is still compared on every row.
func (s *Store) gateQuery(sc memgate.Scope, ids []string, g store.ReadGate) (*Query, error) {
	b := new(Query)
	b.SQL(selectMemory, " WHERE ").scope(sc, "", s.dl.ByID)
	In(b.SQL(" AND "), "id", ids)
	now, asOf := g.Now.UTC(), g.AsOf.UTC()
	b.SQL(" AND status = 'active' AND (expires_at IS NULL OR (expires_at > ", b.Arg(now), " AND expires_at > ", b.Arg(asOf), "))")
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
