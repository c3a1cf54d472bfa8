package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/sqlite"
)

// existingDB returns the path of a new, empty database: for the commands
// that refuse a missing one.
func existingDB(t *testing.T) string {
	t.Helper()
	path := newDB(t)
	db, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// dirEntries lists what is in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestCommandsOtherThanCreatorsRefuseAMissingDatabase: every command that
// does not create a database says there is none, exits 1 and leaves the
// directory as it was: no file, no -wal or -shm, no --out or --to file.
func TestCommandsOtherThanCreatorsRefuseAMissingDatabase(t *testing.T) {
	t.Parallel()
	scope := []string{"--tenant", "t", "--principal", "p"}
	const id = "m_00000000000000000000000000"
	for _, tc := range []struct {
		name string
		args []string // after the command name and --db PATH; OUT is a path in the same directory
	}{
		{"list", append([]string{"list"}, scope...)},
		{"get", append([]string{"get", id}, scope...)},
		{"recall", append([]string{"recall", "tea"}, scope...)},
		{"counts", []string{"counts", "--tenant", "t"}},
		{"audit", []string{"audit", "--tenant", "t"}},
		{"export", []string{"export", "--tenant", "t"}},
		{"export --out", []string{"export", "--tenant", "t", "--out", "OUT"}},
		{"update", append([]string{"update", id, "--content", "x"}, scope...)},
		{"supersede", append([]string{"supersede", id, "new"}, scope...)},
		{"revoke", append([]string{"revoke", id}, scope...)},
		{"approve", append([]string{"approve", id, "--version", "1"}, scope...)},
		{"reject", append([]string{"reject", id, "--version", "1"}, scope...)},
		{"feedback", append([]string{"feedback", id, "--value", "0.5"}, scope...)},
		{"delete", append([]string{"delete", id}, scope...)},
		{"forget", append([]string{"forget"}, scope...)},
		{"sweep", []string{"sweep"}},
		{"keys list", []string{"keys", "list", "--tenant", "t"}},
		{"keys revoke", []string{"keys", "revoke", "--tenant", "t", "k_x"}},
		{"mcp", append([]string{"mcp"}, scope...)},
		{"chat", append([]string{"chat", "--llm", "ollama:m", "--llm-url", "http://127.0.0.1:1"}, scope...)},
		{"reembed", []string{"reembed", "--tenant", "t"}},
		{"backup", []string{"backup", "--to", "OUT"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			db := filepath.Join(dir, "memgate.db")
			args := append([]string(nil), tc.args...)
			for i, a := range args {
				if a == "OUT" {
					args[i] = filepath.Join(dir, "out")
				}
			}
			// keys takes its subcommand before the flags.
			at := 1
			if args[0] == "keys" {
				at = 2
			}
			full := append(append(append([]string{}, args[:at]...), "--db", db), args[at:]...)
			code, out, errs := runMemgate(full...)
			want := "no database at " + db + ": create one with memgate serve, remember or import"
			if code != 1 || strings.Count(errs, want) != 1 || strings.Count(errs, "\n") != 1 || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and one line %q", code, out, errs, want)
			}
			if left := dirEntries(t, dir); len(left) > 0 {
				t.Fatalf("left behind %v", left)
			}
		})
	}
	// migrate: a missing source is refused before the destination is
	// created.
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.db"), filepath.Join(dir, "dst.db")
	code, _, errs := runMemgate("migrate", "--from", "sqlite:"+src, "--to", "sqlite:"+dst)
	if code != 1 || strings.Count(errs, "no database at "+src) != 1 {
		t.Fatalf("migrate from a missing file: exit %d, %q", code, errs)
	}
	if left := dirEntries(t, dir); len(left) > 0 {
		t.Fatalf("migrate left behind %v", left)
	}
	// Control: on an existing database the same reads succeed.
	db := existingDB(t)
	for _, args := range [][]string{
		append([]string{"list"}, scope...),
		{"counts", "--tenant", "t"},
		{"audit", "--tenant", "t"},
		{"keys", "list", "--db", db, "--tenant", "t"},
	} {
		if args[0] != "keys" {
			args = append([]string{args[0], "--db", db}, args[1:]...)
		}
		if code, _, errs := runMemgate(args...); code != 0 || errs != "" {
			t.Fatalf("%v on an existing database: exit %d, %q", args, code, errs)
		}
	}
}

// TestCreatingCommandsSayWhereOnce: remember, import, keys create,
// migrate --to and serve create a missing database and say so on stderr
// once; on the database they made, they say nothing of it.
func TestCreatingCommandsSayWhereOnce(t *testing.T) {
	t.Parallel()
	jsonl := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(jsonl, []byte(`{"principal":"p","kind":"fact","content":"Alice drinks tea."}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	source, empty := existingDB(t), existingDB(t)
	mustCLI(t, source, "remember", "--tenant", "t", "--principal", "p", "A memory to migrate.")
	for _, tc := range []struct {
		name string
		run  func(db string) (int, string, string)
	}{
		{"remember", func(db string) (int, string, string) {
			return cli(t, db, "", "remember", "--tenant", "t", "--principal", "p", "Alice drinks tea.")
		}},
		{"import", func(db string) (int, string, string) {
			return cli(t, db, "", "import", "--tenant", "t", jsonl)
		}},
		{"import stdin", func(db string) (int, string, string) {
			return cli(t, db, `{"principal":"p","kind":"fact","content":"Alice drinks tea."}`+"\n", "import", "--tenant", "t", "-")
		}},
		{"keys create", func(db string) (int, string, string) {
			return runMemgate("keys", "create", "--db", db, "--tenant", "t", "--role", "admin")
		}},
		{"migrate --to", func(db string) (int, string, string) {
			from := source
			if _, err := os.Stat(db); err == nil {
				from = empty // the second run: the memory is there already
			}
			return runMemgate("migrate", "--from", "sqlite:"+from, "--to", "sqlite:"+db, "--into-nonempty")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := newDB(t)
			code, _, errs := tc.run(db)
			want := "memgate: created a new database at " + db + "\n"
			if code != 0 || strings.Count(errs, want) != 1 {
				t.Fatalf("exit %d, stderr %q; want %q once", code, errs, want)
			}
			if _, err := os.Stat(db); err != nil {
				t.Fatalf("no database after the message: %v", err)
			}
			code, _, errs = tc.run(db)
			if code != 0 || strings.Contains(errs, "created a new database") {
				t.Fatalf("again: exit %d, stderr %q; want no message", code, errs)
			}
		})
	}
	t.Run("serve", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		s := startServe(t, db)
		const msg = `"msg":"created a new database","db":"`
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(s.stderr.String(), msg) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // logged just after the address is printed
		}
		if n := strings.Count(s.stderr.String(), msg+db+`"`); n != 1 {
			t.Fatalf("serve logged the creation %d times:\n%s", n, s.stderr)
		}
		if code := s.stop(); code != 0 {
			t.Fatalf("serve exited %d", code)
		}
		s = startServe(t, db)
		time.Sleep(50 * time.Millisecond)
		if strings.Contains(s.stderr.String(), "created a new database") {
			t.Fatalf("a second start logged a creation:\n%s", s.stderr)
		}
	})
}

// TestUsageMistakesExitTwoSayingItOnce: a usage mistake exits 2 with its
// message once on stderr (the flag package prints one itself, which is
// not shown), nothing on stdout, and no database made.
func TestUsageMistakesExitTwoSayingItOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string // --db PATH is added after the first argument, unless noDB
		want string
		noDB bool
	}{
		{"unknown flag", []string{"list", "--tenant", "t", "--bogus"}, "flag provided but not defined: -bogus", false},
		{"flag without value", []string{"list", "--tenant"}, "flag needs an argument: -tenant", false},
		{"bad number", []string{"list", "--tenant", "t", "--limit", "many"}, `invalid value "many" for flag -limit`, false},
		{"bad boolean", []string{"list", "--json=maybe"}, `invalid boolean value "maybe" for -json`, false},
		{"remember without content", []string{"remember", "--tenant", "t", "--principal", "p"}, "missing CONTENT", false},
		{"get without id", []string{"get", "--tenant", "t", "--principal", "p"}, "expected exactly one memory ID", false},
		{"recall without query", []string{"recall", "--tenant", "t", "--principal", "p"}, "missing QUERY", false},
		{"approve without version", []string{"approve", "--tenant", "t", "--principal", "p", "m_1"}, "--version is required", false},
		{"keys subcommand", []string{"keys", "rotate"}, `unknown subcommand "rotate"`, false},
		{"backup without --to", []string{"backup"}, "--to is required", false},
		{"version argument", []string{"version", "now"}, "version takes no arguments", true},
		{"version flag", []string{"version", "--db", "x.db"}, "flag provided but not defined: -db", true},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			args := tc.args
			if !tc.noDB {
				args = append([]string{tc.args[0], "--db", filepath.Join(dir, "memgate.db")}, tc.args[1:]...)
			}
			code, out, errs := runMemgate(args...)
			if code != 2 || strings.Count(errs, tc.want) != 1 || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and %q once", code, out, errs, tc.want)
			}
			if strings.Count(errs, "\n") != 1 {
				t.Fatalf("stderr is not one line: %q", errs)
			}
			if left := dirEntries(t, dir); len(left) > 0 {
				t.Fatalf("a usage mistake left %v", left)
			}
		})
	}
	// No command at all: the usage, on stderr, exit 2.
	if code, out, errs := runMemgate(); code != 2 || out != "" || !strings.Contains(errs, "usage: memgate COMMAND") {
		t.Fatalf("no command: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// Control: -h is no mistake; it prints the flags and exits 0.
	code, out, errs := runMemgate("list", "-h")
	if code != 0 || out != "" || !strings.Contains(errs, "usage: memgate list") || !strings.Contains(errs, "-all-principals") {
		t.Fatalf("list -h: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, out, _ := runMemgate("help"); code != 0 || !strings.Contains(out, "backup") {
		t.Fatalf("help: exit %d, %q", code, out)
	}
}
