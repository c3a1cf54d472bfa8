package main

import "testing"

func TestTitleDatabase(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, title, db string
		isDB            bool
	}{
		{"tcp backend", "postgres: 15/main: memgate memgate_bench 127.0.0.1(32786) idle", "memgate_bench", true},
		{"tcp backend, no cluster name", "postgres: memgate other 10.0.0.1(5000) SELECT", "other", true},
		{"unix socket backend", "postgres: 15/main: postgres postgres [local] idle", "postgres", true},
		{"autovacuum worker", "postgres: 15/main: autovacuum worker memgate_bench", "memgate_bench", true},
		{"autovacuum launcher", "postgres: 15/main: autovacuum launcher", "", false},
		{"walwriter", "postgres: 15/main: walwriter", "", false},
		{"postmaster", "/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main", "", false},
		{"empty", "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, isDB := titleDatabase(c.title)
			if db != c.db || isDB != c.isDB {
				t.Fatalf("titleDatabase(%q) = %q, %v; want %q, %v", c.title, db, isDB, c.db, c.isDB)
			}
		})
	}
}
