package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/index"
	"github.com/memgate/memgate/store"
)

// Replicas. Several engines may share one store (memgate serve replicas
// over one PostgreSQL, several processes over one SQLite file), each with
// its own in-memory index. The store numbers every change of a partition
// (store.Store.PartitionHead) and tells what changed after a number
// (ChangesSince); each resident index partition carries the number it
// reflects (its version). So:
//
//   - A load reads the head before the memories. A change committed in
//     between may or may not be in what it reads; either way it is numbered
//     above the version the partition starts at, and the next catch-up
//     applies it (again): an upsert of a memory's current state, or a
//     remove, is harmless to repeat.
//   - Every recall reads the head first (one primary-key lookup) and, if
//     the resident partition is behind, reads the changes after its version
//     and applies them (catchUp) before searching: upsert for active
//     memories, remove for the others and for deleted ids. A memory
//     committed on another replica before this recall began is therefore
//     in the index it searches, with its current content, vector and
//     lifecycle fields.
//   - Applying is a compare-and-set on the version (index.Index.Apply):
//     concurrent recalls catching up take turns and never move it back, and
//     changes read from version v are applied only to a partition still at
//     v, so an older read can never overwrite a newer one.
//   - Local writes do not upsert into the index: the store does not say
//     which number a write got, so the version cannot advance past it and
//     the next recall reads it back anyway; and an upsert made after the
//     commit could land after a catch-up that applied a later change of the
//     same memory from another replica, leaving the older state behind a
//     version that claims the newer one. Local writes only remove what left
//     the active set (revoke, delete, eviction, sweep), at once, which can
//     only make the index propose less.
//   - When the store cannot tell the changes (deletions pruned after the
//     partition's version, or a head below it: Reset), the partition is
//     dropped and the search reloads it.
//
// None of this is what keeps a revoked, forgotten, deleted, superseded or
// expired memory from being returned: the read gate is. The index only
// proposes; the results are re-read through Fetch with the full predicate
// (scope, status, expiry, validity, filters) in the query that reads them,
// so a stale partition can only lose a memory for one recall, never return
// one that left. Catching up is what makes the index propose what is new.

// changesPage is the number of changes read per ChangesSince call.
const changesPage = 1000

// A resident partition more changes behind than it holds entries (and more
// than one page of them) is dropped and loaded anew rather than caught up:
// a change costs a random read of the whole memory and an index write
// (70–100 µs each on SQLite), a load about 6 µs a memory read in order
// (BENCHMARKS.md, "Catching up or loading anew"). The count is the head
// minus the version: at least the changes to read (a memory changed twice
// is read once), so a partition is reloaded only when that is clearly the
// cheaper. A burst of remembers at a retention cap is the usual case: the
// partition ends the size it was, and every memory of it has changed.
func farBehind(behind int64, entries int) bool {
	return behind > changesPage && behind > int64(entries)
}

// searchAttempts bounds the searches of one recall: a search runs on a
// partition older than the head only when it waited for a load that
// started before the head was read; it then catches up and searches again.
const searchAttempts = 3

// search brings the resident partition of (tenant, principal) up to head,
// then searches it.
func (e *Engine) search(ctx context.Context, tenant, principal string, q index.Query, head int64) (*index.Result, error) {
	for attempt := 1; ; attempt++ {
		if err := e.catchUp(ctx, tenant, principal, head); err != nil {
			return nil, err
		}
		res, err := e.rec.idx.Search(ctx, tenant, principal, q)
		if err != nil || res.Version >= head || attempt == searchAttempts {
			return res, err
		}
	}
}

// catchUp applies to the resident partition of (tenant, principal) the
// changes the store numbered after its version, until the version reaches
// head. A partition that is not resident, or that it drops as far behind
// (farBehind), is left to the next search, which loads it at a version of
// at least head.
func (e *Engine) catchUp(ctx context.Context, tenant, principal string, head int64) error {
	for {
		applied, entries, ok := e.rec.idx.Resident(tenant, principal)
		if !ok || applied >= head {
			return nil
		}
		if farBehind(head-applied, entries) {
			e.rec.idx.Drop(tenant, principal)
			e.log.InfoContext(ctx, "index partition reloaded: far behind", "tenant", tenant, "principal", principal, "version", applied, "head", head, "entries", entries)
			return nil
		}
		ch, err := e.store.ChangesSince(ctx, tenant, principal, applied, changesPage)
		if err != nil {
			return fmt.Errorf("read changes of partition %s/%s: %w", tenant, principal, err)
		}
		if ch.Reset || ch.Head <= applied {
			// The store cannot tell what changed (or went back): reload.
			e.rec.idx.Drop(tenant, principal)
			e.log.InfoContext(ctx, "index partition reset", "tenant", tenant, "principal", principal, "version", applied, "head", ch.Head)
			return nil
		}
		ups, rms := e.changeEntries(ch)
		// Not applied (false): another recall moved the version first;
		// the loop reads it again. An error has dropped the partition.
		if _, err := e.rec.idx.Apply(tenant, principal, applied, ch.Head, ups, rms); err != nil {
			e.log.WarnContext(ctx, "index partition dropped", "tenant", tenant, "principal", principal, "err", memgate.ErrorCode(err))
		}
	}
}

// changeEntries turns changes into index upserts (active memories) and
// removes (every other memory, and the deleted ids). A new entry goes to
// the end of its group, and the store reports changes in change order, in
// which a memory changed again after a later one was stored comes after
// it: sorting by creation time puts the turns of a conversation back in
// order (a batch shares one time and keeps its order: the sort is stable).
func (e *Engine) changeEntries(ch *store.Changes) (ups []index.Entry, rms []string) {
	ms := slices.Clone(ch.Memories)
	slices.SortStableFunc(ms, func(a, b *memgate.Memory) int { return cmp.Compare(a.CreatedAt.UnixMicro(), b.CreatedAt.UnixMicro()) })
	for _, m := range ms {
		if m.Status == memgate.StatusActive {
			ups = append(ups, e.rec.entry(m))
		} else {
			rms = append(rms, m.ID)
		}
	}
	return ups, append(rms, ch.Deleted...)
}
