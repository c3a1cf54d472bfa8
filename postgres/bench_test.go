package postgres

import (
	"testing"

	"github.com/memgate/memgate/postgres/pgtest"
	"github.com/memgate/memgate/store/storetest"
)

// BenchmarkDrainAudit is the audit drain under bench/load's recall phase
// (storetest.BenchDrainAudit).
//
//	go test ./postgres -run '^$' -bench DrainAudit -benchtime 100x
func BenchmarkDrainAudit(b *testing.B) {
	db, err := Open(b.Context(), Config{URL: pgtest.URL(b), Schema: pgtest.NewSchema(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	storetest.BenchDrainAudit(b, db)
}
