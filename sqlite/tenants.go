package sqlite

import "context"

// Tenants implements store.Store: every tenant that has a memory, an audit
// event or a key, in byte order (SQLite's default BINARY collation).
func (db *DB) Tenants(ctx context.Context) ([]string, error) {
	r, err := db.reader()
	if err != nil {
		return nil, err
	}
	rows, err := r.QueryContext(ctx, `SELECT tenant FROM memories UNION SELECT tenant FROM audit_events
		UNION SELECT tenant FROM keys ORDER BY 1`)
	if err != nil {
		return nil, interpretError(ctx, "tenants", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, interpretError(ctx, "tenants", err)
		}
		out = append(out, t)
	}
	return out, interpretError(ctx, "tenants", rows.Err())
}
