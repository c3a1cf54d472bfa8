package sqlite

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// Fetch must look rows up by id, not scan the partition: recall calls it on
// every request, and a partition can hold 100k memories.
func TestFetchLooksUpByID(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := memgate.Scope{Tenant: "t", Principal: "p", Agent: "a", Conversation: "c"}
	now := time.Now()
	where, args := fetchScopeSQL(s)
	q, args, err := gateSQL(where, args, []string{"a", "b"}, store.ReadGate{Now: now, AsOf: now, Metadata: map[string]any{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.r.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "(tenant=? AND id=?)") {
		t.Fatalf("Fetch does not look up by (tenant, id):\n%s", text)
	}
}
