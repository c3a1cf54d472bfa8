package crash

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/memgate/memgate"
	"github.com/memgate/memgate/sqlite"
	_ "modernc.org/sqlite" // database/sql driver "sqlite", for the file check
)

// listed is the part of a listed memory the checks read.
type listed struct {
	ID            string         `json:"id"`
	Principal     string         `json:"principal"`
	Status        memgate.Status `json:"status"`
	Content       string         `json:"content"`
	ContentSHA256 string         `json:"content_sha256"`
	Supersedes    string         `json:"supersedes"`
	SupersededBy  string         `json:"superseded_by"`
}

// findings is what a check found wrong, by memory id, with a note on each
// id and list (request number, item, hashes, ids: never content).
type findings struct {
	lost, corrupt, dups, strays []string
	// Supersessions (checkLinks): halfDone and doubles by old id, wrong by
	// the id whose state is wrong.
	halfDone, doubles, wrong []string
	// notes is keyed by list (the index of lists) and id.
	notes map[note]string
}

type note struct {
	list int
	id   string
}

// findingList is one of a findings' lists and what it finds.
type findingList struct {
	ids  *[]string
	what string
}

// lists returns f's lists in a fixed order.
func (f *findings) lists() []findingList {
	return []findingList{
		{&f.lost, "lost"},
		{&f.corrupt, "corrupt"},
		{&f.dups, "duplicate"},
		{&f.strays, "stray"},
		{&f.halfDone, "half-done supersession of"},
		{&f.doubles, "two successors of"},
		{&f.wrong, "wrong state"},
	}
}

// add records id in list (one of f's) with a note; an id already in the
// list keeps its first note.
func (f *findings) add(list *[]string, id, format string, args ...any) {
	if f.notes == nil {
		f.notes = map[note]string{}
	}
	k := note{slices.IndexFunc(f.lists(), func(l findingList) bool { return l.ids == list }), id}
	if _, ok := f.notes[k]; ok {
		return
	}
	*list = append(*list, id)
	f.notes[k] = fmt.Sprintf(format, args...)
}

// check compares stored memories with the acknowledged ones expected among
// them. lookup finds any request by number (for a copy of a request
// acknowledged earlier); confirm is asked about an expected id the listing
// did not return (it may have been listed elsewhere) and answers whether it
// is stored, and as what.
//
//   - an expected id neither listed nor confirmed is lost;
//   - a listed or confirmed memory whose content or content hash is not
//     the one sent is corrupt (as is one whose content_sha256 is not the
//     hash of its content);
//   - a listed memory carrying the token of an acknowledged item under
//     another id is a duplicate;
//   - a listed memory of no acknowledged request is a stray.
func check(stored []listed, expected map[string]ref, lookup func(seq int) *request,
	confirm func(id string, q *request) (*listed, error)) (findings, error) {
	var f findings
	found := map[string]bool{}
	intact := func(m *listed, q *request, item int) bool {
		return m.Content == q.contents[item] && m.ContentSHA256 == q.hashes[item] &&
			memgate.ContentHash(m.Content) == m.ContentSHA256
	}
	for i := range stored {
		m := &stored[i]
		if e, ok := expected[m.ID]; ok {
			found[m.ID] = true
			if !intact(m, e.q, e.item) {
				f.add(&f.corrupt, m.ID, "request %d item %d: stored with content_sha256 %s (hash of the stored content %s), sent %s",
					e.q.seq, e.item, m.ContentSHA256, memgate.ContentHash(m.Content), e.q.hashes[e.item])
			}
			continue
		}
		seq, item, ok := parseToken(m.Content)
		var q *request
		if ok {
			q = lookup(seq)
		}
		switch {
		case !ok:
			f.add(&f.strays, m.ID, "a content the harness did not write")
		case q == nil || q.ids == nil || item >= len(q.ids):
			f.add(&f.strays, m.ID, "request %d item %d, never acknowledged", seq, item)
		case q.ids[item] != m.ID:
			f.add(&f.dups, m.ID, "a second copy of request %d item %d (key %s), acknowledged as %s", seq, item, q.key, q.ids[item])
		}
		// Else: an acknowledged memory the caller did not expect in this
		// listing (an earlier round's); the round that expected it checked it.
	}
	for id, e := range expected {
		if found[id] {
			continue
		}
		m, err := confirm(id, e.q)
		if err != nil {
			return f, err
		}
		switch {
		case m == nil:
			f.add(&f.lost, id, "request %d item %d (key %s), acknowledged in round %d, not found", e.q.seq, e.item, e.q.key, e.q.round)
		case !intact(m, e.q, e.item):
			f.add(&f.corrupt, id, "request %d item %d: stored with content_sha256 %s (hash of the stored content %s), sent %s",
				e.q.seq, e.item, m.ContentSHA256, memgate.ContentHash(m.Content), e.q.hashes[e.item])
		}
	}
	return f, nil
}

// merge adds g's findings to f's.
func (f *findings) merge(g findings) {
	lists := f.lists()
	for i, l := range g.lists() {
		for _, id := range *l.ids {
			f.add(lists[i].ids, id, "%s", g.notes[note{i, id}])
		}
	}
}

// checkLinks checks the supersessions stored memories take part in, and
// the state the acknowledged memories in expected must be in. get reads a
// memory the listing did not return (nil when it is not stored); named
// maps an old id to the memories seen naming it in supersedes, across
// calls (the round checks pass the run's: each memory is listed fresh in
// one round only), and is updated.
//
//   - an old id named in supersedes by a stored memory, when the old
//     memory is not stored or not superseded by one of the memories naming
//     it, is a half-done supersession; so is a stored memory that is
//     superseded by no memory, by one not stored or by one that does not
//     name it, or has a superseded_by without being superseded. An
//     unacknowledged supersession must thus be all there or all absent.
//   - an old id named in supersedes by two memories has two successors.
//   - an acknowledged memory is in the wrong state unless its supersedes
//     is the old id its request sent ("" for a remember) and it is
//     superseded by the memory of the acknowledged supersession of it if
//     there is one, else active (a supersession of it sent and never
//     acknowledged allows either: the half-done checks judge that). The
//     old memory of every acknowledged supersession in expected is judged
//     too, read when expected does not hold it, and lost when not stored.
func checkLinks(stored []listed, expected map[string]ref, led *ledger,
	get func(id, principal string) (*listed, error), named map[string][]string) (findings, error) {
	var f findings
	byID := make(map[string]*listed, len(stored))
	for i := range stored {
		byID[stored[i].ID] = &stored[i]
	}
	absent := map[string]bool{}
	fetch := func(id, principal string) (*listed, error) {
		if m, ok := byID[id]; ok {
			return m, nil
		}
		if absent[id] {
			return nil, nil
		}
		m, err := get(id, principal)
		if err != nil {
			return nil, err
		}
		if m == nil {
			absent[id] = true
		} else {
			byID[id] = m
		}
		return m, nil
	}

	// The new memories' side: who names an old one.
	olds := map[string]string{} // old id → principal
	for i := range stored {
		m := &stored[i]
		if m.Supersedes == "" {
			continue
		}
		if !slices.Contains(named[m.Supersedes], m.ID) {
			named[m.Supersedes] = append(named[m.Supersedes], m.ID)
		}
		olds[m.Supersedes] = m.Principal
	}
	for _, id := range slices.Sorted(maps.Keys(olds)) {
		ns := named[id]
		if len(ns) > 1 {
			f.add(&f.doubles, id, "named in supersedes by %d memories: %s", len(ns), strings.Join(ns, ", "))
		}
		o, err := fetch(id, olds[id])
		switch {
		case err != nil:
			return f, err
		case o == nil:
			f.add(&f.halfDone, id, "named in supersedes by %s, not stored", strings.Join(ns, ", "))
		case o.Status != memgate.StatusSuperseded || !slices.Contains(ns, o.SupersededBy):
			f.add(&f.halfDone, id, "named in supersedes by %s, stored %s with superseded_by %q", strings.Join(ns, ", "), o.Status, o.SupersededBy)
		}
	}
	// The old memories' side: who supersedes them.
	for i := range stored {
		m := &stored[i]
		if m.Status != memgate.StatusSuperseded && m.SupersededBy == "" {
			continue
		}
		if m.Status != memgate.StatusSuperseded || m.SupersededBy == "" {
			f.add(&f.halfDone, m.ID, "stored %s with superseded_by %q", m.Status, m.SupersededBy)
			continue
		}
		n, err := fetch(m.SupersededBy, m.Principal)
		switch {
		case err != nil:
			return f, err
		case n == nil:
			f.add(&f.halfDone, m.ID, "superseded by %s, which is not stored", m.SupersededBy)
		case n.Supersedes != m.ID:
			f.add(&f.halfDone, m.ID, "superseded by %s, which names %q in supersedes", m.SupersededBy, n.Supersedes)
		}
	}
	// The acknowledged memories' states.
	judge := func(id string, e ref) error {
		m, err := fetch(id, e.q.principal)
		if err != nil || m == nil {
			return err // not stored: check reports the loss
		}
		status, by, known := memgate.StatusActive, "", true
		if s := led.successor(id); s != nil {
			status, by, known = memgate.StatusSuperseded, "", s.ids != nil
			if known {
				by = s.ids[0]
			}
		}
		if m.Supersedes != e.q.supersedes || known && (m.Status != status || m.SupersededBy != by) {
			want := fmt.Sprintf("%s with superseded_by %q", status, by)
			if !known {
				want = "active, or superseded by its unacknowledged successor"
			}
			f.add(&f.wrong, id, "request %d item %d: stored %s with supersedes %q and superseded_by %q; want supersedes %q, %s",
				e.q.seq, e.item, m.Status, m.Supersedes, m.SupersededBy, e.q.supersedes, want)
		}
		return nil
	}
	for _, id := range slices.Sorted(maps.Keys(expected)) {
		e := expected[id]
		if err := judge(id, e); err != nil {
			return f, err
		}
		old := e.q.supersedes
		if old == "" {
			continue
		}
		if _, ok := expected[old]; ok {
			continue // judged in its turn
		}
		oe, ok := led.acknowledged(old)
		if !ok {
			continue // the harness supersedes acknowledged memories only
		}
		switch m, err := fetch(old, e.q.principal); {
		case err != nil:
			return f, err
		case m == nil:
			f.add(&f.lost, old, "request %d item %d (key %s), acknowledged in round %d and superseded by request %d, not found",
				oe.q.seq, oe.item, oe.q.key, oe.q.round, e.q.seq)
		default:
			if err := judge(old, oe); err != nil {
				return f, err
			}
		}
	}
	return f, nil
}

// record adds what a check found to the run's sets and problems.
func (r *run) record(when string, f findings) {
	sets := []map[string]bool{r.lost, r.corrupt, r.dups, r.strays, r.halfDone, r.doubles, r.wrong}
	for i, l := range f.lists() {
		for _, id := range *l.ids {
			if r.mark(sets[i], id) {
				r.problem("%s: %s %s: %s", when, l.what, id, f.notes[note{i, id}])
			}
		}
	}
	r.mu.Lock()
	r.rep.Lost, r.rep.Corrupt, r.rep.Duplicates, r.rep.Strays = len(r.lost), len(r.corrupt), len(r.dups), len(r.strays)
	r.rep.HalfDone, r.rep.DoubleSuccessors, r.rep.WrongState = len(r.halfDone), len(r.doubles), len(r.wrong)
	r.mu.Unlock()
}

// mark adds id to set and reports whether it is new there.
func (r *run) mark(set map[string]bool, id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if set[id] {
		return false
	}
	set[id] = true
	return true
}

// verifyRound checks round k with the writers paused: the memories stored
// since the previous round (the newest, listed until one a previous round
// saw) against those acknowledged in the round, and the supersessions they
// take part in (old memories stored in earlier rounds are read by id).
// Every request sent was acknowledged before the pause, and the previous
// round's memories were all stored before this one's started, so
// insertion order separates the rounds.
func (r *run) verifyRound(ctx context.Context, k int) error {
	expected := r.led.roundIDs()
	var fresh []listed
	cursor := ""
	// The first page fits the round's memories and a few more (what the
	// round stored without acknowledging would be more): the page after
	// it is only read when the round stored more than expected.
	limit := len(expected) + 20
	for done := false; !done; limit = 500 {
		page, next, err := r.list(ctx, cursor, limit)
		if err != nil {
			return fmt.Errorf("crash: list after kill %d: %w", k, err)
		}
		for _, m := range page {
			if r.seen[m.ID] {
				done = true
				break
			}
			fresh = append(fresh, m)
		}
		if next == "" {
			done = true
		}
		cursor = next
	}
	for _, m := range fresh {
		r.seen[m.ID] = true
	}
	f, err := check(fresh, expected, r.led.request, r.confirm(ctx))
	if err != nil {
		return fmt.Errorf("crash: check after kill %d: %w", k, err)
	}
	lf, err := checkLinks(fresh, expected, &r.led, r.getter(ctx), r.named)
	if err != nil {
		return fmt.Errorf("crash: check supersessions after kill %d: %w", k, err)
	}
	f.merge(lf)
	r.record(fmt.Sprintf("after kill %d", k), f)
	return nil
}

// verifyAll checks every memory stored against every one acknowledged,
// every supersession, and the count the API and (PostgreSQL) the database
// give.
func (r *run) verifyAll(ctx context.Context) error {
	all, err := r.listAll(ctx)
	if err != nil {
		return fmt.Errorf("crash: final list: %w", err)
	}
	expected := r.led.allIDs()
	f, err := check(all, expected, r.led.request, r.confirm(ctx))
	if err != nil {
		return fmt.Errorf("crash: final check: %w", err)
	}
	lf, err := checkLinks(all, expected, &r.led, r.getter(ctx), map[string][]string{})
	if err != nil {
		return fmt.Errorf("crash: final check of supersessions: %w", err)
	}
	f.merge(lf)
	r.record("final check", f)
	r.mu.Lock()
	r.rep.StoredAtEnd = len(all)
	r.mu.Unlock()
	n, err := r.storedCount(ctx)
	if err != nil {
		return err
	}
	if n != len(all) {
		r.mismatch("final check: /v1/stats counts %d memories, the listing returned %d", n, len(all))
	}
	if r.cfg.Postgres != "" {
		n, err := pgCount(ctx, r.cfg.Postgres)
		if err != nil {
			return err
		}
		if n != len(all) {
			r.mismatch("final check: SELECT count(*) FROM memories says %d, the listing returned %d", n, len(all))
		}
	}
	return nil
}

// listAll returns every memory of the tenant.
func (r *run) listAll(ctx context.Context) ([]listed, error) {
	var all []listed
	cursor := ""
	for {
		page, next, err := r.list(ctx, cursor, 500)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if next == "" {
			return all, nil
		}
		cursor = next
	}
}

// mismatch records two counts that disagree.
func (r *run) mismatch(format string, args ...any) {
	r.mu.Lock()
	r.rep.CountMismatches++
	r.mu.Unlock()
	r.problem(format, args...)
}

// list returns one page of the tenant's memories (at most limit, 500 at
// most), newest first, and the next page's cursor ("" on the last page).
func (r *run) list(ctx context.Context, cursor string, limit int) ([]listed, string, error) {
	q := url.Values{"limit": {strconv.Itoa(min(limit, 500))}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	var out struct {
		Memories   []listed `json:"memories"`
		NextCursor string   `json:"next_cursor"`
	}
	if err := r.getJSON(ctx, "/v1/memories?"+q.Encode(), &out); err != nil {
		return nil, "", err
	}
	return out.Memories, out.NextCursor, nil
}

// confirm returns check's confirm: a GET of the memory in its request's
// principal.
func (r *run) confirm(ctx context.Context) func(string, *request) (*listed, error) {
	return func(id string, q *request) (*listed, error) { return r.get(ctx, id, q.principal) }
}

// getter returns checkLinks' get: r.get.
func (r *run) getter(ctx context.Context) func(id, principal string) (*listed, error) {
	return func(id, principal string) (*listed, error) { return r.get(ctx, id, principal) }
}

// get returns the memory id of principal, or nil when the API answers 404.
func (r *run) get(ctx context.Context, id, principal string) (*listed, error) {
	var m listed
	err := r.getJSON(ctx, "/v1/memories/"+url.PathEscape(id)+"?"+url.Values{"principal": {principal}}.Encode(), &m)
	if errors.Is(err, errNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// storedCount is the tenant's memory count by /v1/stats.
func (r *run) storedCount(ctx context.Context) (int, error) {
	var out struct {
		Total int `json:"total"`
	}
	if err := r.getJSON(ctx, "/v1/stats", &out); err != nil {
		return 0, fmt.Errorf("crash: stats: %w", err)
	}
	return out.Total, nil
}

var errNotFound = errors.New("not found")

// getJSON GETs path from a replica that is up, with the admin key.
func (r *run) getJSON(ctx context.Context, path string, out any) error {
	i, base, _, ok := r.tg.pick(-1)
	if !ok {
		return errors.New("no replica is up")
	}
	defer r.tg.done(i)
	req, err := http.NewRequestWithContext(ctx, "GET", base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", r.key)
	resp, err := r.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return errNotFound
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("GET %s: HTTP %d %s", strings.SplitN(path, "?", 2)[0], resp.StatusCode, errorCode(b))
	}
	return json.Unmarshal(b, out)
}

// checkFile runs PRAGMA integrity_check and PRAGMA foreign_key_check on the
// SQLite file while no child has it open, and records a failure.
func (r *run) checkFile(ctx context.Context, when string) {
	start := time.Now()
	var err error
	if r.cfg.FileChecker != "" {
		err = runChecker(ctx, r.cfg.FileChecker, r.cfg.SQLite)
	} else {
		err = CheckSQLite(ctx, r.cfg.SQLite)
	}
	r.mu.Lock()
	r.checks = append(r.checks, time.Since(start))
	r.rep.IntegrityChecks++
	if err != nil {
		r.rep.IntegrityFailures++
	}
	r.mu.Unlock()
	if err != nil {
		r.problem("%s: %v", when, err)
	}
}

// runChecker runs "prog path" and returns nil when it exits 0, else an
// error with what it printed.
func runChecker(ctx context.Context, prog, path string) error {
	out, err := exec.CommandContext(ctx, prog, path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %s (%w)", filepath.Base(prog), strings.TrimSpace(string(out)), err)
	}
	return nil
}

// CheckSQLite checks the SQLite file at path as the harness does after
// every kill, while no process has it open. It opens the database
// read-only, so that the check neither recovers nor checkpoints the
// write-ahead log (the next server must do that itself, as after a real
// crash), and runs PRAGMA integrity_check (which must answer the one row
// "ok") and PRAGMA foreign_key_check (which must answer no row), on the
// database file and on its audit log's (sqlite.AuditPath) and the log's
// inbox's (sqlite.InboxPath), when it has them.
func CheckSQLite(ctx context.Context, path string) error {
	if err := checkSQLiteFile(ctx, path); err != nil {
		return err
	}
	for _, f := range []struct{ name, path string }{{"the audit log", sqlite.AuditPath(path)}, {"the audit inbox", sqlite.InboxPath(path)}} {
		if _, err := os.Stat(f.path); err == nil {
			if err := checkSQLiteFile(ctx, f.path); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
		}
	}
	return nil
}

// checkSQLiteFile is CheckSQLite's check of one file.
func checkSQLiteFile(ctx context.Context, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	// A file: URI (as package sqlite opens it) keeps a path with '?' or
	// '#' from being read as parameters.
	uri := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?mode=ro&_pragma=busy_timeout(10000)"
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return fmt.Errorf("integrity check: open: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	var msgs []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return fmt.Errorf("integrity check: %w", err)
		}
		msgs = append(msgs, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	if len(msgs) != 1 || msgs[0] != "ok" {
		if len(msgs) > 5 {
			msgs = append(msgs[:5], fmt.Sprintf("(%d more)", len(msgs)-5))
		}
		return fmt.Errorf("PRAGMA integrity_check: %s", strings.Join(msgs, "; "))
	}
	rows, err = db.QueryContext(ctx, "PRAGMA foreign_key_check")
	if err != nil {
		return fmt.Errorf("foreign key check: %w", err)
	}
	n := 0
	var first string
	for rows.Next() {
		var table, parent string
		var rowid sql.NullInt64
		var fk int
		if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
			rows.Close()
			return fmt.Errorf("foreign key check: %w", err)
		}
		if n == 0 {
			first = fmt.Sprintf("%s row %d references a missing %s", table, rowid.Int64, parent)
		}
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("foreign key check: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("PRAGMA foreign_key_check: %d violations, first: %s", n, first)
	}
	return nil
}

// pgCount counts the memories table with SQL, beside the API's count.
func pgCount(ctx context.Context, dbURL string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return 0, fmt.Errorf("crash: connect to PostgreSQL: %w", err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM memories").Scan(&n); err != nil {
		return 0, fmt.Errorf("crash: count memories: %w", err)
	}
	return n, nil
}
