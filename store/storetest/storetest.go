// Package storetest is the conformance suite for store.Store backends, in the
// spirit of river's riverdrivertest and go-cloud's drivertest: every backend
// runs the same tests, and a backend's test file is a few lines:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "m.db"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { db.Close() })
//			return db
//		})
//	}
//
// The suite states the contract written on store.Store as tests. Every "must
// not" case has a populated control beside it (the same call succeeding for
// the owner), so a store that returns nothing for everyone cannot pass. A
// behaviour change to the port means a new case here first.
//
// It uses only the exported API of memgate and store, and must never depend
// on a particular backend.
package storetest

import (
	"slices"
	"testing"

	"github.com/memgate/memgate/store"
)

// Run runs the conformance suite. newStore must return a new, empty store on
// every call and close it when the test ends (t.Cleanup). Subtests run in
// parallel, each with its own stores.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	groups := []struct {
		name  string
		tests []test
	}{
		{"Insert", insertTests},
		{"Scope", scopeTests},
		{"List", listTests},
		{"Update", updateTests},
		{"SetStatus", setStatusTests},
		{"Supersede", supersedeTests},
		{"SetEmbedding", setEmbeddingTests},
		{"Promote", promoteTests},
		{"Delete", deleteTests},
		{"Forget", forgetTests},
		{"Counts", countsTests},
		{"Concurrency", concurrencyTests},
		{"Recall", recallTests},
		{"Remember", rememberTests},
		{"Idempotency", idempotencyTests},
		{"Retention", retentionTests},
		{"Feedback", feedbackTests},
		{"DeleteExpired", deleteExpiredTests},
		{"Audit", auditTests},
		{"AuditHistogram", histogramTests},
		{"Keys", keyTests},
		{"MemoryKeys", memoryKeyTests},
		{"PartitionHead", append(slices.Clone(partitionHeadTests), headChangeTests...)},
		{"PartitionSize", partitionSizeTests},
		{"ChangesSince", changesTests},
		{"Calibration", calibrationTests},
		{"Tenants", tenantsTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.run(t, newStore)
				})
			}
		})
	}
}

// test is one conformance case. It calls newStore for every store it needs.
type test struct {
	name string
	run  func(t *testing.T, newStore func(t *testing.T) store.Store)
}
