package sqlite

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/store"
)

// The refs of a batch of audit events go in statements of a power of two
// of rows (padded by repeating a ref), so batches naming every count of
// memories prepare a handful of statement texts, not one per count, and
// the refs are still exactly the memories each event names.
func TestAuditRefsStatementShapes(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	refStatements := func() int {
		db.c.stmts.mu.Lock()
		defer db.c.stmts.mu.Unlock()
		n := 0
		for k := range db.c.stmts.stmts {
			if strings.HasPrefix(k.query, "INSERT INTO audit_refs") {
				n++
			}
		}
		return n
	}
	want := map[string][]string{} // memory id → recall ids naming it
	for n := 1; n <= 40; n++ {
		ids := make([]string, n)
		for k := range ids {
			ids[k] = fmt.Sprintf("m_%03d", k)
		}
		ids = append(ids, ids[0]) // an event may name a memory twice
		rid := fmt.Sprintf("r_%03d", n)
		for _, id := range ids[:n] {
			want[id] = append(want[id], rid)
		}
		ev := store.AuditEvent{Tenant: "acme", Principal: "alice", Actor: "key_1", Action: "recall", At: time.Now(), RecallID: rid, MemoryIDs: ids}
		if err := db.AppendAudit(t.Context(), []store.AuditEvent{ev}); err != nil {
			t.Fatal(err)
		}
		// One event a drain: the refs of each count in a statement.
		if err := db.DrainAudit(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	// Counts 2..41 pad to 2, 4, 8, 16, 32 and 64 rows.
	if got := refStatements(); got == 0 || got > 6 {
		t.Errorf("%d statement texts inserted the refs of 40 counts, want 1 to 6", got)
	}
	for id, rids := range want {
		page, err := db.ListAudit(t.Context(), "acme", store.AuditFilter{MemoryID: id, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range page.Events {
			got = append([]string{e.RecallID}, got...) // newest first
		}
		if fmt.Sprint(got) != fmt.Sprint(rids) {
			t.Errorf("memory %s: recalls %v, want %v", id, got, rids)
		}
	}
	if len(want["m_039"]) != 1 || len(want["m_000"]) != 40 {
		t.Fatalf("control: %d and %d recalls expected of m_039 and m_000", len(want["m_039"]), len(want["m_000"]))
	}
}
