package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// The change tracking of the schemas' change migrations: triggers keep
// partition_heads, memories.change_seq and memory_tombstones; these
// statements only read them (and prune tombstones).
const (
	// A partition without a head row (never written, or forgotten) reads
	// as head = pruned = its tenant's high mark. Arguments: tenant,
	// principal, tenant, tenant, principal, tenant.
	partitionHeadSQL = `SELECT
		COALESCE((SELECT head FROM partition_heads WHERE tenant = ? AND principal = ?), (SELECT high FROM tenant_heads WHERE tenant = ?), 0),
		COALESCE((SELECT pruned FROM partition_heads WHERE tenant = ? AND principal = ?), (SELECT high FROM tenant_heads WHERE tenant = ?), 0)`
	changedSQL = `SELECT change_seq, ` + memoryColumns + ` FROM memories
		WHERE tenant = ? AND principal = ? AND change_seq > ? ORDER BY change_seq LIMIT ?`
	// A tombstone whose id the partition holds again is left out: the
	// memory is reported in its current state instead.
	deletedSQL = `SELECT t.change_seq, t.id FROM memory_tombstones t
		WHERE t.tenant = ? AND t.principal = ? AND t.change_seq > ?
		AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.tenant = t.tenant AND m.id = t.id AND m.principal = t.principal)
		ORDER BY t.change_seq LIMIT ?`
	// Closed by prune, after Dialect.SkipLocked.
	pruneChangesSQL = `DELETE FROM memory_tombstones WHERE (tenant, principal, change_seq) IN (
		SELECT tenant, principal, change_seq FROM memory_tombstones WHERE deleted_at < ?
		ORDER BY deleted_at LIMIT ?`
)

func head(ctx context.Context, q Querier, tenant, principal string) (head, pruned int64, err error) {
	return headOf(q.QueryRow(ctx, partitionHeadSQL, tenant, principal, tenant, tenant, principal, tenant))
}

// headOf scans the row of partitionHeadSQL.
func headOf(row Row) (head, pruned int64, err error) {
	err = row.Scan(&head, &pruned)
	if errors.Is(err, ErrNoRows) {
		return 0, 0, nil
	}
	return head, pruned, err
}

// PartitionHead implements store.Store: one primary-key lookup, before
// every recall.
func (s *Store) PartitionHead(ctx context.Context, tenant, principal string) (int64, error) {
	if err := (memgate.Scope{Tenant: tenant, Principal: principal}).Validate(); err != nil {
		return 0, err
	}
	return read(ctx, s, "partition head", func(q Querier) (int64, error) {
		h, _, err := headOf(s.lookupRow(ctx, q, partitionHeadSQL, tenant, principal, tenant, tenant, principal, tenant))
		return h, err
	})
}

// partitionSizeSQL sums the partition's retention populations (the live
// counts of active and pending memories the populations triggers keep):
// a few rows of that table's primary key.
const partitionSizeSQL = `SELECT COALESCE(SUM(n), 0) FROM populations WHERE tenant = ? AND principal = ?`

// PartitionSize implements store.Store.
func (s *Store) PartitionSize(ctx context.Context, tenant, principal string) (int, error) {
	if err := (memgate.Scope{Tenant: tenant, Principal: principal}).Validate(); err != nil {
		return 0, err
	}
	return read(ctx, s, "partition size", func(q Querier) (int, error) {
		var n int64
		err := q.QueryRow(ctx, partitionSizeSQL, tenant, principal).Scan(&n)
		return int(n), err
	})
}

// ChangesSince implements store.Store. The head, the changed memories and
// the tombstones are read in one snapshot (Driver.Snapshot), so they
// agree: each list is one range of an index in sequence order, and the two
// are merged.
func (s *Store) ChangesSince(ctx context.Context, tenant, principal string, since int64, limit int) (*store.Changes, error) {
	if err := (memgate.Scope{Tenant: tenant, Principal: principal}).Validate(); err != nil {
		return nil, err
	}
	switch {
	case since < 0:
		return nil, memgate.FieldError("since", "must not be negative")
	case limit < 1:
		return nil, memgate.FieldError("limit", "must be at least 1")
	}
	var out *store.Changes
	err := s.d.Snapshot(ctx, "changes since", func(q Querier) error {
		var err error
		out, err = changesSince(ctx, q, tenant, principal, since, limit)
		return err
	})
	return out, err
}

type seqMemory struct {
	seq int64
	m   *memgate.Memory
}

type seqID struct {
	seq int64
	id  string
}

func changesSince(ctx context.Context, q Querier, tenant, principal string, since int64, limit int) (*store.Changes, error) {
	out := &store.Changes{Memories: []*memgate.Memory{}, Deleted: []string{}}
	h, pruned, err := head(ctx, q, tenant, principal)
	if err != nil {
		return nil, err
	}
	out.Head = h
	if since < pruned || since > h {
		out.Reset = true
		return out, nil
	}
	if since == h {
		return out, nil
	}

	// One row more than limit from each list tells whether there is more.
	mems, err := collect(func(r Rows) (seqMemory, error) {
		m, seq, err := scanMemory(r, true)
		return seqMemory{seq, m}, err
	})(q.Query(ctx, changedSQL, tenant, principal, since, limit+1))
	if err != nil {
		return nil, err
	}
	dels, err := collect(func(r Rows) (seqID, error) {
		var d seqID
		return d, r.Scan(&d.seq, &d.id)
	})(q.Query(ctx, deletedSQL, tenant, principal, since, limit+1))
	if err != nil {
		return nil, err
	}

	// Merge in sequence order (sequences are distinct within a partition)
	// up to limit items.
	var i, j int
	for n := 0; n < limit && (i < len(mems) || j < len(dels)); n++ {
		if j == len(dels) || (i < len(mems) && mems[i].seq < dels[j].seq) {
			out.Memories = append(out.Memories, mems[i].m)
			out.Head = mems[i].seq
			i++
			continue
		}
		out.Deleted = append(out.Deleted, dels[j].id)
		out.Head = dels[j].seq
		j++
	}
	out.Deleted = lastOccurrences(out.Deleted)
	if i < len(mems) || j < len(dels) {
		out.More = true
		return out, nil
	}
	// Everything after since was read, in the snapshot of head.
	out.Head = h
	return out, nil
}

// lastOccurrences removes from ids every id that occurs again later: an id
// deleted, stored again and deleted again has several tombstones, and is
// reported once, at its last deletion.
func lastOccurrences(ids []string) []string {
	last := make(map[string]int, len(ids))
	for i, id := range ids {
		last[id] = i
	}
	if len(last) == len(ids) {
		return ids
	}
	out := ids[:0]
	for i, id := range ids {
		if last[id] == i {
			out = append(out, id)
		}
	}
	return out
}

// PruneChanges implements store.Store: the oldest tombstones first, through
// memory_tombstones_deleted_at. A trigger raises each partition's pruned
// mark as they go.
func (s *Store) PruneChanges(ctx context.Context, before time.Time, limit int) (int64, error) {
	return s.prune(ctx, "prune changes", pruneChangesSQL, before, limit)
}
