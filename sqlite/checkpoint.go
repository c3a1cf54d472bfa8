package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite"
)

// Checkpoints
//
// In WAL mode a commit appends pages to the write-ahead log, and a
// checkpoint copies them back into the database file, after fsyncing the
// log, and fsyncs the file; the next write transaction that begins with
// every frame copied, and no reader left in the log, starts the log again
// from its beginning. SQLite's automatic checkpoint runs in the commit
// that takes the log past 1000 pages, on the committing connection: here
// the one writer, so every ~1000 pages a remember waiting for its
// acknowledgement, and every write queued behind it, waited for the copy
// and the two fsyncs (a third of the writer's commit time in the remember
// phase of bench/load, issue 27).
//
// So the writer does not checkpoint in its commits (wal_autocheckpoint=0,
// a setting of the connection, so of both its files). A commit hook on
// it counts the pages it writes to the logs (SQLITE_DBSTATUS_CACHE_WRITE)
// and, past checkpointPages (SQLite's own threshold), wakes the
// checkpointer, which runs a PASSIVE checkpoint of each file on a
// connection of its own: it waits for no reader and no writer, and
// copies the frames there were when it began while the writer goes on
// committing.
//
// That alone does not bound the log under continuous writes: the frames
// committed meanwhile are left, and the log can start again only when a
// write begins with none left, which a checkpoint running beside the
// writer never sees when writes follow one another without a pause (in a
// test of back-to-back commits, the log grew by about half of what was
// written). So when a checkpoint finds a log longer than
// checkpointEscalate times checkpointPages frames, the checkpointer
// finishes it on the writer connection, with a second PASSIVE checkpoint
// of what is left: no write begins until it ends, and the next one starts
// the log again unless a reader is still in it. That checkpoint copies
// only the frames committed during the first (its fsyncs flush only
// those), so the writer waits for a fraction of what the automatic
// checkpoint cost it, once every few checkpoints. Finishing every
// checkpoint on the writer kept the log as short as before, but the
// writer then copied, each time, the pages written again since the first
// pass: in CPU profiles of bench/load's remember phase, checkpoints on
// the writer took 2.8 % of the server's CPU against 4.8 % for the
// automatic checkpoint, and 0.8 % against 5.7 % when only long logs are
// finished there. The log is thus bounded: about checkpointEscalate times
// checkpointPages frames, more while short readers keep it from starting
// again, and, as with the automatic checkpoint, without bound while a
// reader holds an old snapshot (a backup, a cold load), which no
// checkpoint may copy past; once that reader ends, the next checkpoints
// copy everything and the log starts again. A RESTART checkpoint could
// bound it during such a read only by making every write wait for the
// reader, holding the write lock: behind a long backup, writes would
// time out instead.
//
// Checkpoints of one file are serialized by SQLite, across processes (a
// CLI beside a server): one that finds another running answers busy at
// once, without waiting, and is left to the next wake-up, or to the other
// process, which copies the same frames. In this process the checkpointer
// and truncateWAL (Erase) never run at once (mu), so that an Erase never
// finds the checkpointer's checkpoint in its way. Close stops the
// checkpointer before closing the connections; the writer, closed last,
// checkpoints the logs and removes them, as before.
//
// The checkpointer logs nothing. A checkpoint that fails (a full disk, an
// I/O error) is retried at the next wake-up; the writes that meet the same
// condition report it.

const (
	// checkpointPages is how many pages the writer writes to the logs
	// between checkpoints: SQLite's automatic threshold
	// (SQLITE_DEFAULT_WAL_AUTOCHECKPOINT), 1000 pages of 4 KiB.
	checkpointPages = 1000
	// checkpointEscalate times the pages between checkpoints is the
	// length of a log, in frames, past which the writer finishes the
	// checkpoint: 4000 frames, about 16 MiB.
	checkpointEscalate = 4
)

// checkpointer runs the checkpoints of the writer's logs. Its methods are
// safe for concurrent use.
type checkpointer struct {
	pages int64   // pages between checkpoints; 0 or less: never (tests' control)
	db    *sql.DB // its own connection (one)
	w, a  *sql.DB // the writer and the appender, which finish long checkpoints

	written atomic.Int64  // pages written since the last wake-up
	wake    chan struct{} // buffered (1)
	stop    chan struct{}
	done    chan struct{} // closed when run returns
	once    sync.Once

	// mu is held by each checkpoint and by truncateWAL.
	mu sync.Mutex

	runs  atomic.Int64 // checkpoints run, for tests
	wrote atomic.Int64 // pages the writer wrote to the logs, for tests and benchmarks
}

func newCheckpointer(pages int64) *checkpointer {
	return &checkpointer{pages: pages, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// writerHooks is what the checkpointer needs of the writer's driver
// connection (modernc.org/sqlite's).
type writerHooks interface {
	RegisterCommitHook(sqlite.CommitHookFn)
	sqlite.DBStatus
}

// attach turns the automatic checkpoint of conn (the writer's, a new
// one included) off and counts its pages: each commit adds those the
// connection wrote to the logs since the previous one (the commit hook
// runs before the commit writes its own, which the next one counts).
func (k *checkpointer) attach(ctx context.Context, conn driver.Conn) error {
	h, ok := conn.(writerHooks)
	if !ok {
		return errors.New("the driver's connection has no commit hook")
	}
	ex, ok := conn.(driver.ExecerContext)
	if !ok {
		return errors.New("the driver's connection cannot execute statements")
	}
	if _, err := ex.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0", nil); err != nil {
		return err
	}
	h.RegisterCommitHook(func() int32 {
		n, _, err := h.Status(sqlite.DBStatusCacheWrite, true)
		if err == nil {
			k.wrote.Add(int64(n))
		}
		if err == nil && k.written.Add(int64(n)) >= k.pages {
			k.kick()
		}
		return 0 // 0: go on with the commit
	})
	return nil
}

// kick wakes the checkpointer unless it is already due to run (or never
// runs).
func (k *checkpointer) kick() {
	if k.pages <= 0 {
		return
	}
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// start runs the checkpointer on db (its own connection) until close; w
// and a are the writer and the appender.
func (k *checkpointer) start(db, w, a *sql.DB) {
	k.db, k.w, k.a = db, w, a
	go k.run()
}

func (k *checkpointer) run() {
	defer close(k.done)
	for {
		select {
		case <-k.stop:
			return
		case <-k.wake:
		}
		k.written.Store(0)
		k.checkpoint()
	}
}

// checkpoint runs a PASSIVE checkpoint of each file on the checkpointer's
// connection, then, for each log longer than checkpointEscalate times the
// pages between checkpoints, one on the connection that writes it (the
// writer's, or the appender's for the inbox).
func (k *checkpointer) checkpoint() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.runs.Add(1)
	ctx := context.Background()
	for _, f := range []struct {
		schema string
		writer *sql.DB
		as     string // the schema on writer
	}{{"main", k.w, "main."}, {"audit", k.w, "audit."}, {"inbox", k.a, "main."}} {
		frames, err := passive(ctx, k.db, f.schema+".")
		if err != nil {
			return // retried at the next wake-up
		}
		if int64(frames) > checkpointEscalate*k.pages {
			passive(ctx, f.writer, f.as)
		}
	}
}

// passive runs a PASSIVE checkpoint of schema ("" for all) on db, and
// returns the length of its log in frames. Its busy flag (another
// checkpoint was running) needs no handling: what is left is copied at
// the next one.
func passive(ctx context.Context, db *sql.DB, schema string) (frames int, err error) {
	var busy, copied int
	err = db.QueryRowContext(ctx, "PRAGMA "+schema+"wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied)
	return frames, err
}

// close stops the checkpointer and closes its connection. It is safe to
// call on one that was never started.
func (k *checkpointer) close() error {
	var err error
	k.once.Do(func() {
		close(k.stop)
		if k.db != nil {
			<-k.done
			err = k.db.Close()
		}
	})
	return err
}
