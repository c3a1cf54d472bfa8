// Package isolation holds the isolation property test of memgate (issue 11,
// item 3). It has no code of its own: everything is in its test files.
//
// The property: whatever a caller does, through whichever surface, every
// memory it is shown or changes lies inside its key's binding (tenant, and
// principal and agent where the key is bound to them) and inside the
// narrowing fields and filters of its request. A memory outside them is
// answered exactly like one that never existed: not_found, with the same
// code, message and status, and it is left as it was.
//
// TestIsolation drives seeded random sequences of remember (with
// supersedes, idempotency keys, or both: a supersession's key is recorded
// in the partition of its new memory, which may be outside the caller's
// scope, and its retries replay whatever became of the old memory), recall,
// list, get, update, revoke, approve, delete, forget, import and export,
// over 3 tenants × 3 principals × 2 agents × 2 conversations whose names
// differ only in case or by a LIKE wildcard, with API keys of every binding
// auth allows (admin, agent bound to nothing, a principal, an agent or
// both, user), through the engine, the HTTP API and the MCP server (which
// offers remember, recall, list, revoke and forget only), on SQLite and on
// PostgreSQL. Beside each call it reads the store with privilege to judge
// the answer: a shadow registry of every memory id and its owner, the
// change sequence of every partition (so any row written outside the
// caller's reach is seen), and a census of the whole store every few
// operations. Counters of in-binding results that were not empty, and of
// cross-binding attempts made, keep the test from passing vacuously;
// TestIsolationCatches plants one isolation bug at a time in a surface and
// requires the checks to report it.
//
// The seed is logged at start and printed, with the command that replays
// the run, on every failure:
//
//	go test ./internal/isolation -run 'TestIsolation$/sqlite/http' -isolation.seed=N
//
// This package must never weaken the product to make the property hold: a
// violation is a bug in the product, fixed there, with a regression case here.
package isolation
