package main

import (
	"strings"
	"testing"
)

// rememberTwice checks remember --idempotency-key through run (the embedded
// engine or a server): a retry with the same key and content prints the
// first call's id and stores nothing; the same key with other content fails
// naming the key and stores nothing; a new key stores anew (the control).
func rememberTwice(t *testing.T, run func(args ...string) (int, string, string), count func() int) {
	t.Helper()
	remember := func(key, content string) (int, string, string) {
		return run("remember", "--principal", "alice", "--idempotency-key", key, content)
	}
	code, first, errs := remember("k-1", "Alice drinks green tea.")
	if code != 0 || strings.TrimSpace(first) == "" || errs != "" {
		t.Fatalf("first remember: exit %d, stdout %q, stderr %q", code, first, errs)
	}
	code, again, errs := remember("k-1", "Alice drinks green tea.")
	if code != 0 || again != first || !strings.Contains(errs, "replayed") {
		t.Fatalf("retry: exit %d, stdout %q (first %q), stderr %q; want the same id, replayed", code, again, first, errs)
	}
	if n := count(); n != 1 {
		t.Fatalf("after a retry: %d memories, want 1", n)
	}
	code, out, errs := remember("k-1", "Alice drinks black coffee.")
	if code != 1 || out != "" || !strings.Contains(strings.ToLower(errs), "idempotency") {
		t.Fatalf("reused key: exit %d, stdout %q, stderr %q; want exit 1 naming the key", code, out, errs)
	}
	if n := count(); n != 1 {
		t.Fatalf("after a reused key: %d memories, want 1", n)
	}
	code, other, errs := remember("k-2", "Alice drinks black coffee.")
	if code != 0 || other == first || strings.Contains(errs, "replayed") {
		t.Fatalf("new key: exit %d, stdout %q, stderr %q; want a new memory", code, other, errs)
	}
	if n := count(); n != 2 {
		t.Fatalf("after a new key: %d memories, want 2", n)
	}
}

// supersedeTwice checks supersede --idempotency-key through run: a retry
// prints the first call's new memory where a retry without the key fails,
// its old memory being superseded by then (the control).
func supersedeTwice(t *testing.T, run func(args ...string) (int, string, string), active func() []string) {
	t.Helper()
	code, out, errs := run("remember", "--principal", "carol", "Carol lives in Lyon.")
	old := strings.TrimSpace(out)
	if code != 0 || old == "" {
		t.Fatalf("remember: exit %d, stderr %q", code, errs)
	}
	supersede := func(key string) (int, string, string) {
		args := []string{"supersede", "--principal", "carol", old, "Carol lives in Berlin."}
		if key != "" {
			args = append(args, "--idempotency-key", key)
		}
		return run(args...)
	}
	code, first, errs := supersede("s-1")
	next := strings.TrimSpace(first)
	if code != 0 || next == "" || next == old {
		t.Fatalf("supersede: exit %d, stdout %q, stderr %q", code, first, errs)
	}
	code, again, errs := supersede("s-1")
	if code != 0 || again != first {
		t.Fatalf("retry with the key: exit %d, stdout %q (first %q), stderr %q; want the same id", code, again, first, errs)
	}
	if got := active(); len(got) != 1 || got[0] != next {
		t.Fatalf("active after a retry: %v, want [%s]", got, next)
	}
	code, _, errs = supersede("")
	if code != 1 || !strings.Contains(errs, "superseded") {
		t.Fatalf("retry without a key: exit %d, stderr %q; want a conflict for a superseded memory", code, errs)
	}
	if got := active(); len(got) != 1 || got[0] != next {
		t.Fatalf("active after the control: %v, want [%s]", got, next)
	}
}

func TestRememberIdempotencyKey(t *testing.T) {
	t.Parallel()
	db := existingDB(t)
	rememberTwice(t, func(args ...string) (int, string, string) {
		return cli(t, db, "", append(args, "--tenant", "t")...)
	}, func() int { return len(listIDs(t, db, "--tenant", "t", "--principal", "alice")) })

	code, _, errs := cli(t, db, "", "remember", "--tenant", "t", "--principal", "alice", "--idempotency-key", "a key", "x")
	if code != 1 || !strings.Contains(errs, "idempotency_key:") {
		t.Fatalf("malformed key: exit %d, stderr %q; want exit 1 naming idempotency_key", code, errs)
	}
	if n := len(listIDs(t, db, "--tenant", "t", "--principal", "alice")); n != 2 {
		t.Fatalf("a malformed key stored a memory: %d, want 2", n)
	}
	supersedeTwice(t, func(args ...string) (int, string, string) {
		return cli(t, db, "", append(args, "--tenant", "t")...)
	}, func() []string { return listIDs(t, db, "--tenant", "t", "--principal", "carol", "--status", "active") })
}

// TestRemoteRememberIdempotencyKey sends the key to a server, which keeps it
// as the Idempotency-Key header.
func TestRemoteRememberIdempotencyKey(t *testing.T) {
	s, db, _ := serverKey(t)
	rememberTwice(t, func(args ...string) (int, string, string) {
		return remote(t, s.url, "", args...)
	}, func() int { return len(listIDs(t, db, "--tenant", "default", "--principal", "alice")) })
	supersedeTwice(t, func(args ...string) (int, string, string) {
		return remote(t, s.url, "", args...)
	}, func() []string {
		return listIDs(t, db, "--tenant", "default", "--principal", "carol", "--status", "active")
	})
}
