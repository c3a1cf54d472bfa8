// Package pgtest gives tests a PostgreSQL database to work in: the URL
// named by MEMGATE_TEST_POSTGRES, and a fresh schema of it per test. It is
// the one place that decides what a missing PostgreSQL means: a skip on a
// developer's machine, a failure in CI (CI set) or wherever
// MEMGATE_REQUIRE_POSTGRES=1 (scripts/test sets it after starting one).
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env names the variable holding the test database's URL.
const Env = "MEMGATE_TEST_POSTGRES"

// URL returns the test database's URL, or ends the test without one.
func URL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv(Env); u != "" {
		return u
	}
	if os.Getenv("MEMGATE_REQUIRE_POSTGRES") == "1" || os.Getenv("CI") != "" {
		t.Fatalf("%s is not set: in CI a missing PostgreSQL is a failure, not a skip (scripts/test starts one and sets it)", Env)
	}
	t.Skipf("%s is not set: the PostgreSQL tests need a database URL (scripts/test starts the local PostgreSQL and sets it)", Env)
	return ""
}

// NewSchema creates a schema with a random name in the test database and
// drops it (with everything in it) when the test ends.
func NewSchema(t testing.TB) string {
	t.Helper()
	base := URL(t)
	var b [8]byte
	rand.Read(b[:])
	name := "memgate_test_" + hex.EncodeToString(b[:])
	exec := func(ctx context.Context, sql string) error {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec(context.Background(), "CREATE SCHEMA "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := exec(ctx, "DROP SCHEMA "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	return name
}

// SchemaURL returns the test database's URL with its search_path set to a
// new schema (NewSchema), for code that opens the database from a URL.
func SchemaURL(t testing.TB) string {
	t.Helper()
	base := URL(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", NewSchema(t))
	u.RawQuery = q.Encode()
	return u.String()
}
