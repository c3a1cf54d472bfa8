// Package isolation holds the isolation property test of memgate (issue 11,
// item 3), extended to the trust model between agents and people (issue
// 17). It has no code of its own: everything is in its test files.
//
// The property: whatever a caller does, through whichever surface, every
// memory it is shown or changes lies inside its key's binding (tenant, and
// principal and agent where the key is bound to them) and inside the
// narrowing fields and filters of its request. A memory outside them is
// answered exactly like one that never existed: not_found, with the same
// code, message and status, and it is left as it was. Within the binding,
// the key's trust narrows it further, and the test holds every surface to
// it:
//
//   - Sources: a key writes (remembers, batches, updates, supersedes) only
//     memories attributed to a source it may claim (its grant at creation,
//     else its role's default: agent assistant and tool, user user, admin
//     any). Otherwise the request is forbidden naming the field (source,
//     memories[i].source, supersedes) and changes nothing; and every memory
//     a remember, batch or update writes, even one that should have been
//     refused, must be one its key may claim.
//   - A remember's key and its dedup replace only what its writer could
//     itself have superseded (issue 26): the memory a keyed write
//     replaces, and the one a duplicate folds into, is of the source the
//     write claims (each source its own key and dedup space), and never a
//     restricted one for a key that may not read it. Such a holder makes
//     the write a conflict naming the key and no memory. Remembers name
//     keys at the level they land at, often another source's key (and its
//     content), and copy the content of another source's memory there.
//   - Revoking retires: a key that may not delete a memory (an agent key)
//     revokes only one of a source it may claim, else forbidden naming
//     source, and nothing changes.
//   - Restricted memories never reach an agent key, on any read path of
//     the surface (get, list, recall, export, the answer of a remember or a
//     revoke): a restricted id answers like a missing one, and asking for
//     restricted memories (include_restricted) or a preview is forbidden.
//     A recall admitted all the same is judged as if it had not asked.
//   - A key bound to an agent changes only that agent's memories (remember
//     through supersedes, update, revoke, approve, delete): a
//     principal-wide or other agent's memory answers like a missing one,
//     though the key reads principal-wide memories.
//   - MCP's list_memories shows, to every key, only what recall could
//     return: active, unexpired, valid now, standard.
//   - An approve names the version reviewed: a stale one is a conflict, and
//     none is refused.
//   - Every memory written records its writer's key: updated_by always,
//     created_by when new (an import's too: its line's is the receipt).
//   - A forget erases the principal's partition and nothing else, and its
//     change feed agrees with the shadow: a reader behind it is reset (a
//     forget leaves no tombstone), the feed read from the start names none
//     of the erased memories, a reader at the new head is not reset again,
//     and no feed resets in a tenant where nothing was forgotten.
//
// TestIsolation drives seeded random sequences of remember (with
// supersedes, idempotency keys, or both: a supersession's key is recorded
// in the partition of its new memory, which may be outside the caller's
// scope, and its retries replay whatever became of the old memory), batch
// remember, recall, list, get, update, revoke, approve, delete, forget,
// import and export, over 3 tenants × 3 principals × 2 agents × 2
// conversations whose names differ only in case or by a LIKE wildcard,
// with API keys of every binding auth allows (admin, agent bound to
// nothing, a principal, an agent or both, user) and agent keys granted
// source user, through three drivers: the guard's Session (package guard,
// the layer under every surface), the HTTP API and the MCP server (which
// offers remember, recall, list, revoke and forget only, and remembers
// nothing restricted), on SQLite and on PostgreSQL. Beside each call it
// reads the store with privilege to judge the answer: a shadow registry of
// every memory id and its owner, the change feed of every partition (so
// any row written outside the caller's reach is seen; a reset feed is
// reloaded and diffed with the shadow), and a census of the whole store
// every few operations.
//
// Counters keep the test from passing vacuously: every operation the
// surface offers must have returned or changed memories in binding, been
// tried on memories outside it (another tenant's among them), and reached
// each trust rule's populated control (a source refused and one granted,
// a restricted memory in an agent key's reach and one named by it, a
// principal-wide memory read and written by an agent-bound key, a stale
// approve, an update by a user key and by an agent key granted source
// user, ...). A run logs them all (-v). After the random operations, the
// controls still missing are topped up by operations aimed at each (the
// keys, requests and ids that can reach it; where no memory of the world
// can, one stored as setup, such as a restricted memory for MCP), checked
// like any other. TestIsolationCatches plants one isolation or trust bug
// at a time in the guard (a Session method that skips a check or widens a
// scope) or in MCP's list, and requires the checks to report it.
//
// The seed is logged at start and printed, with the command that replays
// the run, on every failure:
//
//	go test ./internal/isolation -run '^TestIsolation$/^sqlite$/^guard$' -isolation.seed=N
//
// This package must never weaken the product to make the property hold: a
// violation is a bug in the product, fixed there, with a regression case here.
package isolation
