package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// The change tracking of migration 0006: the triggers keep partition_heads,
// memories.change_seq and memory_tombstones; these statements only read
// them (and prune tombstones).
const (
	// A partition without a head row (never written, or forgotten) reads
	// as head = pruned = its tenant's high mark (migration 0009).
	partitionHeadSQL = `SELECT
		COALESCE((SELECT head FROM partition_heads WHERE tenant = ?1 AND principal = ?2), (SELECT high FROM tenant_heads WHERE tenant = ?1), 0),
		COALESCE((SELECT pruned FROM partition_heads WHERE tenant = ?1 AND principal = ?2), (SELECT high FROM tenant_heads WHERE tenant = ?1), 0)`
	changedSQL = `SELECT change_seq, ` + memoryColumns + ` FROM memories
		WHERE tenant = ? AND principal = ? AND change_seq > ? ORDER BY change_seq LIMIT ?`
	// A tombstone whose id the partition holds again is left out: the
	// memory is reported in its current state instead.
	deletedSQL = `SELECT t.change_seq, t.id FROM memory_tombstones t
		WHERE t.tenant = ? AND t.principal = ? AND t.change_seq > ?
		AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.tenant = t.tenant AND m.id = t.id AND m.principal = t.principal)
		ORDER BY t.change_seq LIMIT ?`
	pruneSQL = `DELETE FROM memory_tombstones WHERE (tenant, principal, change_seq) IN (
		SELECT tenant, principal, change_seq FROM memory_tombstones WHERE deleted_at < ?
		ORDER BY deleted_at LIMIT ?)`
)

// PartitionHead implements store.Store: one primary-key lookup.
func (db *DB) PartitionHead(ctx context.Context, tenant, principal string) (int64, error) {
	if err := (memgate.Scope{Tenant: tenant, Principal: principal}).Validate(); err != nil {
		return 0, err
	}
	stmt, err := db.readStmt(ctx, partitionHeadSQL)
	if err != nil {
		return 0, interpretError(ctx, "partition head", err)
	}
	var head, pruned int64
	err = stmt.QueryRowContext(ctx, tenant, principal).Scan(&head, &pruned)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return head, interpretError(ctx, "partition head", err)
}

// ChangesSince implements store.Store. The head, the changed memories and
// the tombstones are read in one read transaction, so they agree: each
// list is one range of an index in sequence order, and the two are merged.
func (db *DB) ChangesSince(ctx context.Context, tenant, principal string, since int64, limit int) (*store.Changes, error) {
	if err := (memgate.Scope{Tenant: tenant, Principal: principal}).Validate(); err != nil {
		return nil, err
	}
	switch {
	case since < 0:
		return nil, memgate.FieldError("since", "must not be negative")
	case limit < 1:
		return nil, memgate.FieldError("limit", "must be at least 1")
	}
	r, err := db.reader()
	if err != nil {
		return nil, err
	}
	tx, err := r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, interpretError(ctx, "changes since", err)
	}
	defer tx.Rollback()
	out, err := db.changesSince(ctx, tx, tenant, principal, since, limit)
	return out, interpretError(ctx, "changes since", err)
}

// changesSince reads the changes in tx, with the cached reader statements
// (preparing the three on every call would cost more than running them).
func (db *DB) changesSince(ctx context.Context, tx *sql.Tx, tenant, principal string, since int64, limit int) (*store.Changes, error) {
	var stmts [3]*sql.Stmt
	for i, q := range []string{partitionHeadSQL, changedSQL, deletedSQL} {
		s, err := db.readStmt(ctx, q)
		if err != nil {
			return nil, err
		}
		stmts[i] = tx.StmtContext(ctx, s)
	}
	headStmt, changedStmt, deletedStmt := stmts[0], stmts[1], stmts[2]

	out := &store.Changes{Memories: []*memgate.Memory{}, Deleted: []string{}}
	var head, pruned int64
	err := headStmt.QueryRowContext(ctx, tenant, principal).Scan(&head, &pruned)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	out.Head = head
	if since < pruned || since > head {
		out.Reset = true
		return out, nil
	}
	if since == head {
		return out, nil
	}

	// One row more than limit from each list tells whether there is more.
	type memRow struct {
		seq int64
		m   *memgate.Memory
	}
	var mems []memRow
	rows, err := changedStmt.QueryContext(ctx, tenant, principal, since, limit+1)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		m, seq, err := scanMemory(rows, true)
		if err != nil {
			rows.Close()
			return nil, err
		}
		mems = append(mems, memRow{seq, m})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	type delRow struct {
		seq int64
		id  string
	}
	var dels []delRow
	rows, err = deletedStmt.QueryContext(ctx, tenant, principal, since, limit+1)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var d delRow
		if err := rows.Scan(&d.seq, &d.id); err != nil {
			rows.Close()
			return nil, err
		}
		dels = append(dels, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
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
	out.Head = head
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
func (db *DB) PruneChanges(ctx context.Context, before time.Time, limit int) (int64, error) {
	return db.prune(ctx, "prune changes", pruneSQL, before, limit)
}

// prune runs a pruning DELETE whose arguments are a time (records made
// before it go) and a limit, in a write transaction, and returns how many
// rows it deleted; a limit of 0 or less deletes nothing.
func (db *DB) prune(ctx context.Context, op, query string, before time.Time, limit int) (int64, error) {
	if limit <= 0 {
		return 0, nil
	}
	var n int64
	err := db.write(ctx, op, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, query, micros(before), limit)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
