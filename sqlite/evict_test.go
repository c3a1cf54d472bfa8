package sqlite

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store/sqlstore"
)

// TestEvictionIsNotRepreparedAsItsLimitMoves runs retention's eviction as
// the store does, on one connection with the statement kept prepared,
// with the number to evict moving between 1 and more (a remember, a
// batch, a group commit), and requires that SQLite never compiles it again:
// a bare "LIMIT ?" is re-planned whenever the bound value crosses between
// 0 or 1 and the rest, and the eviction's DELETE compiles every trigger on
// memories (sqlstore's evictSQL). The control, the same statement with a
// bare "LIMIT ?", must be re-prepared, or the test could not see it.
func TestEvictionIsNotRepreparedAsItsLimitMoves(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memgate.db")
	db := openTest(t, path)
	ins, err := db.w.Prepare("INSERT INTO memories (" + sqlstore.MemoryColumns + ") VALUES (" + placeholders(strings.Count(sqlstore.MemoryColumns, ",")+1) + ")")
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	at := memgate.Now(time.Now())
	for i := range 40 {
		m := &memgate.Memory{ID: fmt.Sprintf("m_%026d", i), Tenant: "acme", Principal: "alice", Kind: memgate.KindMessage,
			Source: memgate.SourceUser, Sensitivity: memgate.SensitivityStandard, Status: memgate.StatusActive,
			Content: fmt.Sprintf("turn %d", i), CreatedAt: at, UpdatedAt: at, Version: 1, ContentSHA256: "h"}
		args, err := sqlstore.MemoryArgs(m)
		if err != nil {
			t.Fatal(err)
		}
		if args, err = bind(args); err != nil {
			t.Fatal(err)
		}
		if _, err := ins.Exec(args...); err != nil {
			t.Fatal(err)
		}
	}

	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := openStreamConn("file:"+(&url.URL{Path: abs}).EscapedPath(), 5*time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if err := c.exec("PRAGMA query_only = OFF"); err != nil {
		t.Fatal(err)
	}
	// evict runs query once per limit and returns how many rows it
	// deleted and how often SQLite re-prepared it.
	evict := func(query string) (deleted, reprepared int) {
		t.Helper()
		s, err := c.stmt(query)
		if err != nil {
			t.Fatal(err)
		}
		for _, limit := range []int64{1, 2, 1, 3, 1, 2} {
			if err := c.bind(s, []any{"acme", "acme", "alice", "", "message", "user", limit}); err != nil {
				t.Fatal(err)
			}
			for done := false; !done; {
				switch rc := sqlite3.Xsqlite3_step(c.tls, s); rc {
				case sqlite3.SQLITE_ROW:
					deleted++
				case sqlite3.SQLITE_DONE:
					done = true
				default:
					t.Fatalf("step: %v", c.errorOf(rc))
				}
			}
			sqlite3.Xsqlite3_reset(c.tls, s)
		}
		return deleted, int(sqlite3.Xsqlite3_stmt_status(c.tls, s, sqlite3.SQLITE_STMTSTATUS_REPREPARE, 0))
	}

	bare := strings.Replace(sqlstore.EvictSQL, "LIMIT CAST(? AS BIGINT)", "LIMIT ?", 1)
	if bare == sqlstore.EvictSQL {
		t.Fatal("the eviction's limit is not CAST(? AS BIGINT): update the control")
	}
	if deleted, n := evict(bare); deleted != 10 || n == 0 {
		t.Fatalf("control, LIMIT ?: deleted %d (want 10), re-prepared %d times (want some): the test cannot see a re-prepare", deleted, n)
	}
	if deleted, n := evict(sqlstore.EvictSQL); deleted != 10 || n != 0 {
		t.Fatalf("the store's eviction: deleted %d (want 10), re-prepared %d times (want 0)", deleted, n)
	}
}
