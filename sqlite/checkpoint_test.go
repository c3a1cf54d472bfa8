package sqlite

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// Tests of the checkpointer (checkpoint.go). They run it every
// testCheckpointPages pages, so that a few MiB of writes span many
// checkpoints; the controls never run it (a negative threshold), and the
// writer does not checkpoint either, so the same writes grow the log.

const (
	testCheckpointPages = 100
	pageBytes           = 4096 + 24 // a log frame: a page and its header
)

func withCheckpointPages(n int64) Option { return func(c *Config) { c.checkpointPages = n } }

// writePages writes memories of about 4 pages each, 8 to a transaction,
// until the writer has written about pages pages to the log, one
// transaction after another without a pause.
func writePages(t *testing.T, db *DB, prefix string, pages int) {
	t.Helper()
	content := strings.Repeat("filler text to take room in the log. ", 400) // ~15 KB
	for i := 0; i*4 < pages; i += 8 {
		var ms []*memgate.Memory
		for j := range 8 {
			m := testMemory(fmt.Sprintf("%s-%d", prefix, i+j), fmt.Sprint(i+j, content))
			m.DedupKey = ""
			ms = append(ms, m)
		}
		if err := db.Insert(t.Context(), ms); err != nil {
			t.Fatal(err)
		}
	}
}

func walBytes(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// judgeBound fails a case of checkpointerAndControl whose log (its
// file's size, got, after what happened) is on the wrong side of bound:
// over it with the checkpointer, within it for the control.
func judgeBound(t *testing.T, bounded bool, log string, got, bound int64, after string) {
	t.Helper()
	if bounded && got > bound {
		t.Fatalf("%s grew to %d KiB %s, want at most %d KiB", log, got/1024, after, bound/1024)
	}
	if !bounded && got <= bound {
		t.Fatalf("control: %s is %d KiB %s without checkpoints, want over %d KiB", log, got/1024, after, bound/1024)
	}
}

// checkpointerAndControl are the cases of the tests of a bounded log: with
// the checkpointer, and the control without it, whose log grows.
var checkpointerAndControl = []struct {
	name    string
	pages   int64
	bounded bool
}{
	{"checkpointer", testCheckpointPages, true},
	{"control: no checkpointer", -1, false},
}

// TestCheckpointerBoundsWAL: under writes that follow one another without
// a pause, the log's file stays within a few checkpoints' worth of pages
// (the file keeps its largest size: a log started again is overwritten
// from its beginning). Control: without the checkpointer the same writes
// grow it past the bound.
func TestCheckpointerBoundsWAL(t *testing.T) {
	t.Parallel()
	const written, bound = 3000, 10 * testCheckpointPages * pageBytes
	for _, tc := range checkpointerAndControl {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "memgate.db")
			db := openTest(t, path, withCheckpointPages(tc.pages))
			writePages(t, db, "m", written)
			got := walBytes(t, path)
			if runs := db.c.ckpt.runs.Load(); tc.bounded && runs < written/testCheckpointPages/2 {
				t.Errorf("the checkpointer ran %d times for %d pages written, want about %d", runs, written, written/testCheckpointPages)
			}
			judgeBound(t, tc.bounded, "the log", got, bound, fmt.Sprintf("after %d pages written", written))
		})
	}
}

// TestLongReaderThenWALBounded: a reader holding a snapshot keeps every
// checkpoint from copying past it, so the log grows while it reads; once
// it ends, the log starts again and the same writes again do not grow its
// file further. Control: without the checkpointer they do.
func TestLongReaderThenWALBounded(t *testing.T) {
	t.Parallel()
	// The slack is what the writer may write while the first checkpoint
	// after the reader copies the log it left, before the log starts
	// again.
	const written, slack = 3000, 1000 * pageBytes
	for _, tc := range checkpointerAndControl {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "memgate.db")
			db := openTest(t, path, withCheckpointPages(tc.pages))
			writePages(t, db, "before", 100)

			reader, err := db.r.BeginTx(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var n int
			if err := reader.QueryRow("SELECT COUNT(*) FROM memories").Scan(&n); err != nil || n == 0 {
				t.Fatalf("the reader sees %d memories (%v)", n, err)
			}
			writePages(t, db, "during", written)
			held := walBytes(t, path)
			if held < written*pageBytes*3/4 {
				t.Fatalf("the log is %d KiB while a reader held a snapshot, want about %d KiB (did a checkpoint copy past the reader?)", held/1024, written*pageBytes/1024)
			}
			if err := reader.Rollback(); err != nil {
				t.Fatal(err)
			}

			writePages(t, db, "after", written)
			got := walBytes(t, path)
			judgeBound(t, tc.bounded, "the log", got, held+slack, fmt.Sprintf("after the reader ended (%d KiB while it read)", held/1024))
		})
	}
}

// TestCloseStopsCheckpointer: Close stops the checkpointer's goroutine,
// leaves no log beside either file (the last connection checkpointed and
// removed them), and the database reopens with what was written. The
// control: before Close the logs are there, and hold frames.
func TestCloseStopsCheckpointer(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memgate.db")
	db, err := Open(t.Context(), path, withCheckpointPages(testCheckpointPages))
	if err != nil {
		t.Fatal(err)
	}
	writePages(t, db, "m", 1000)
	if _, err := db.Remember(t.Context(), []*memgate.Memory{testMemory("last", "written last")}, nil); err != nil {
		t.Fatal(err)
	}
	if db.c.ckpt.runs.Load() == 0 {
		t.Fatal("the checkpointer never ran")
	}
	for _, p := range []string{path, AuditPath(path)} {
		if st, err := os.Stat(p + "-wal"); err != nil || st.Size() == 0 {
			t.Fatalf("control: before Close, %s-wal: %v", filepath.Base(p), err)
		}
	}
	k := db.c.ckpt
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-k.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the checkpointer still runs after Close")
	}
	for _, p := range []string{path, AuditPath(path)} {
		if _, err := os.Stat(p + "-wal"); !os.IsNotExist(err) {
			t.Fatalf("after Close, %s-wal is there (%v): the database was not checkpointed", filepath.Base(p), err)
		}
	}

	db = openTest(t, path)
	if m, err := db.Get(t.Context(), alice, "last"); err != nil || m.Content != "written last" {
		t.Fatalf("reopened: %v, %v", m, err)
	}
	if m, err := db.Get(t.Context(), alice, "m-0"); err != nil || m.ID != "m-0" {
		t.Fatalf("reopened: %v, %v", m, err)
	}
}

// TestEraseBesideCheckpointer: an Erase (truncateWAL) never finds the
// checkpointer's own checkpoint in its way (SQLite would answer busy at
// once), however often the checkpointer runs.
func TestEraseBesideCheckpointer(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memgate.db")
	db := openTest(t, path, withCheckpointPages(1)) // after every commit
	stop := make(chan struct{})
	done := make(chan error)
	go func() {
		content := strings.Repeat("filler text to take room in the log. ", 400)
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if err := db.Insert(t.Context(), []*memgate.Memory{testMemory(fmt.Sprint("m-", i), fmt.Sprint(i, content))}); err != nil {
				done <- err
				return
			}
		}
	}()
	// Until the checkpointer has run often beside the erases (the
	// control), or for 30 s.
	var err error
	deadline := time.Now().Add(30 * time.Second)
	erased := 0
	for ; err == nil && (erased < 50 || db.c.ckpt.runs.Load() < 20) && time.Now().Before(deadline); erased++ {
		if err = db.c.Erase(t.Context(), "forget"); err != nil {
			err = fmt.Errorf("Erase %d beside the checkpointer: %w", erased, err)
		}
	}
	close(stop)
	if werr := <-done; werr != nil {
		t.Fatal(werr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if runs := db.c.ckpt.runs.Load(); runs < 20 {
		t.Fatalf("control: the checkpointer ran %d times beside %d erases", runs, erased)
	}
}

// TestCheckpointerBoundsInboxWAL: audit appends, which the appender
// commits to the inbox file, keep that file's log within a bound too.
// Control: without the checkpointer the same appends grow it past the
// bound. The bound is looser than the database's (TestCheckpointerBoundsWAL):
// appends commit eight pages or so back to back, and the log, checked
// over runs, peaked at 11 to 20 checkpoints' worth of pages (4.4–8.2 MiB
// here), where twice the appends peaked no higher (4.5 MiB), against
// 22 MiB and 45 MiB without the checkpointer.
func TestCheckpointerBoundsInboxWAL(t *testing.T) {
	t.Parallel()
	const written, bound = 3000, 25 * testCheckpointPages * pageBytes
	for _, tc := range checkpointerAndControl {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "memgate.db")
			db := openTest(t, path, withCheckpointPages(tc.pages))
			// Each batch is about 16 KB of JSON: four pages or so.
			ids := make([]string, 3)
			for i := range ids {
				ids[i] = fmt.Sprintf("m-%d-%s", i, strings.Repeat("x", 100))
			}
			batch := make([]store.AuditEvent, 40)
			for i := range batch {
				batch[i] = store.AuditEvent{Tenant: "acme", Principal: "alice", Actor: "test", Action: "recall", At: time.Now(), MemoryIDs: ids}
			}
			for range written / 4 {
				if err := db.AppendAudit(t.Context(), batch); err != nil {
					t.Fatal(err)
				}
			}
			got := walBytes(t, InboxPath(path))
			judgeBound(t, tc.bounded, "the inbox's log", got, bound, fmt.Sprintf("after about %d pages appended", written))
		})
	}
}
