package server_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/memgate/memgate/internal/serveout"
	"github.com/memgate/memgate/server"
)

// Fault tests: the embedded database out of room (its size cap, a real
// full disk) and failing to write (a file size limit), each checked over
// HTTP for what issue 11 asks of a fault: the write answers 503
// unavailable naming the condition, nothing of it is stored, reads keep
// answering, and writes succeed again once the condition is gone. The
// PostgreSQL outage is in pgoutage_test.go.

// plantedFault is in every memory's content: no log line may hold it.
const plantedFault = "qvorblat"

// keyRE finds the bootstrap admin key in serve's stdout.
var keyRE = regexp.MustCompile(`mgk_[A-Za-z0-9_-]{43}`)

// faultServer is server.Run in this process, on a loopback port.
type faultServer struct {
	base   string
	key    string
	stderr *lockedBuffer
	stop   func()
}

// startServer runs cfg until stop (or the end of the test). key is the
// admin key of an earlier start on the same database, or "" for a first
// start, whose bootstrap key is read from stdout.
func startServer(t *testing.T, cfg server.Config, key string) *faultServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	var stdout lockedBuffer
	s := &faultServer{stderr: &lockedBuffer{}, key: key}
	cfg.Addr, cfg.BootstrapTenant, cfg.Ready = "127.0.0.1:0", "acme", func(a string) { ready <- a }
	cfg.RateLimit.PerSecond = -1
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, cfg, &stdout, s.stderr) }()
	select {
	case addr := <-ready:
		s.base = "http://" + addr
	case err := <-done:
		cancel()
		t.Fatalf("Run returned before serving: %v\n%s", err, s.stderr.String())
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("Run did not become ready")
	}
	if s.key == "" {
		if s.key = keyRE.FindString(stdout.String()); s.key == "" {
			t.Fatalf("no bootstrap key:\n%s", stdout.String())
		}
	}
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("Run did not return after cancel")
			}
			if logs := s.stderr.String(); strings.Contains(logs, plantedFault) {
				t.Errorf("the log holds memory content:\n%s", logs)
			}
		})
	}
	t.Cleanup(s.stop)
	return s
}

// api calls a memgate server with a key; a transport error or a request
// slower than its client's timeout fails the test.
type api struct {
	t    *testing.T
	base string
	key  string
	hc   *http.Client
}

func newAPI(t *testing.T, base, key string) *api {
	return &api{t: t, base: base, key: key, hc: &http.Client{Timeout: 20 * time.Second}}
}

func (a *api) do(method, path, body string) (int, []byte) {
	a.t.Helper()
	req, err := http.NewRequest(method, a.base+path, strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	resp, err := a.hc.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return resp.StatusCode, b
}

// ok calls and fails the test on a status other than want.
func (a *api) ok(want int, method, path, body string) []byte {
	a.t.Helper()
	status, b := a.do(method, path, body)
	if status != want {
		a.t.Fatalf("%s %s: %d %s, want %d", method, path, status, b, want)
	}
	return b
}

// total is the tenant's memory count (GET /v1/stats).
func (a *api) total() int64 {
	a.t.Helper()
	var st struct {
		Total int64 `json:"total"`
	}
	if err := json.Unmarshal(a.ok(http.StatusOK, "GET", "/v1/stats", ""), &st); err != nil {
		a.t.Fatal(err)
	}
	return st.Total
}

// remembers counts the memories the tenant's remember events in the audit
// log name (reading it flushes the engine's audit queue first).
func (a *api) remembers() int {
	a.t.Helper()
	n, cursor := 0, ""
	for {
		var page struct {
			Events     []json.RawMessage `json:"events"`
			NextCursor string            `json:"next_cursor"`
		}
		path := "/v1/audit?action=remember&limit=1000"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if err := json.Unmarshal(a.ok(http.StatusOK, "GET", path, ""), &page); err != nil {
			a.t.Fatal(err)
		}
		for _, ev := range page.Events {
			var e struct {
				MemoryIDs []string `json:"memory_ids"`
			}
			json.Unmarshal(ev, &e)
			n += len(e.MemoryIDs)
		}
		if cursor = page.NextCursor; cursor == "" {
			return n
		}
	}
}

// listed counts the memories whose content holds text (GET /v1/memories?q=).
func (a *api) listed(text string) int {
	a.t.Helper()
	var page struct {
		Memories []json.RawMessage `json:"memories"`
	}
	if err := json.Unmarshal(a.ok(http.StatusOK, "GET", "/v1/memories?limit=100&q="+url.QueryEscape(text), ""), &page); err != nil {
		a.t.Fatal(err)
	}
	return len(page.Memories)
}

// errorOf decodes an error answer.
func errorOf(b []byte) (code, message string) {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	json.Unmarshal(b, &e)
	return e.Error.Code, e.Error.Message
}

// idsOf returns the ids of a remember answer.
func idsOf(t *testing.T, b []byte) []string {
	t.Helper()
	var out struct {
		Memories []struct {
			ID string `json:"id"`
		} `json:"memories"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("remember answer: %v: %s", err, b)
	}
	ids := make([]string, len(out.Memories))
	for i, m := range out.Memories {
		ids[i] = m.ID
	}
	return ids
}

// gardenNotes are the topics of memoryJSON's memories, one in four each
// (so no topic is in so many memories that it identifies the partition:
// see package rank, "Names are not evidence").
var gardenNotes = []string{
	"the tomatoes by the south fence want water every second evening in summer. ",
	"the roses along the north wall need pruning before the first frost. ",
	"the apple tree near the shed gives fruit in late September. ",
	"the runner beans climb the bamboo canes by the greenhouse. ",
}

// memoryJSON is one memory of about 2.5 KiB whose content starts with
// token (unique per memory, so nothing is folded as a duplicate).
func memoryJSON(token string) string {
	h := fnv.New32a()
	h.Write([]byte(token))
	content := token + " " + plantedFault + " Alice keeps notes about the garden: " +
		strings.Repeat(gardenNotes[h.Sum32()%uint32(len(gardenNotes))], 32)
	b, _ := json.Marshal(map[string]string{
		"principal": "alice", "kind": "fact", "source": "user", "reason": "fault test", "content": content,
	})
	return string(b)
}

// batchJSON is a batch of n memories, tokens prefix-0, prefix-1...
func batchJSON(prefix string, n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = memoryJSON(fmt.Sprintf("%s-%d", prefix, i))
	}
	return `{"memories":[` + strings.Join(items, ",") + `]}`
}

// fill remembers batches, then single memories, until the server answers
// 503, and returns the ids it acknowledged and that last answer. Any
// status other than 201 or 503 fails the test.
func fill(t *testing.T, a *api, prefix string, limit int) (acked []string, full []byte) {
	t.Helper()
	size := 16
	settled := false
	for i := 0; ; i++ {
		if i >= limit {
			t.Fatalf("no 503 after %d requests (%d memories stored): the database never filled up", i, len(acked))
		}
		body := batchJSON(fmt.Sprintf("%s%04d", prefix, i), size)
		if size == 1 {
			body = memoryJSON(fmt.Sprintf("%s%04d", prefix, i))
		}
		status, b := a.do("POST", "/v1/memories", body)
		switch {
		case status == http.StatusCreated:
			acked = append(acked, idsOf(t, b)...)
			settled = false
		case status == http.StatusServiceUnavailable && size > 1:
			size = 1 // no room for a batch: one at a time to the brim
		case status == http.StatusServiceUnavailable && !settled:
			// A write's audit events wait beside the memories until they
			// are drained into the audit log's file, which frees their
			// room: a read of the log drains them now, and the brim is
			// where a single memory fails once nothing is left to drain.
			a.do("GET", "/v1/audit?limit=1", "")
			settled = true
		case status == http.StatusServiceUnavailable:
			return acked, b
		default:
			t.Fatalf("remember while filling: %d %s", status, b)
		}
	}
}

// checkFull asserts what a full (or failing) database must do over HTTP,
// with b the 503 answer that showed it: the answer names the condition
// (wantMsg), a batch stores nothing (count, list and audit unchanged),
// reads keep answering 200 (GET and list of acknowledged memories), and a
// recall, whose audit event cannot be committed, answers 503 too.
func checkFull(t *testing.T, a *api, b []byte, wantMsg string, acked []string) {
	t.Helper()
	if code, msg := errorOf(b); code != "unavailable" || !strings.Contains(msg, wantMsg) {
		t.Fatalf("the failed write answered %s, want unavailable naming %q", b, wantMsg)
	}
	if strings.Contains(string(b), plantedFault) || strings.Contains(string(b), "m.db") {
		t.Fatalf("the error shows content or a path: %s", b)
	}
	total, audited := a.total(), a.remembers()
	if total != int64(len(acked)) {
		t.Fatalf("the database holds %d memories, %d were acknowledged", total, len(acked))
	}
	// A write's audit event is appended in the write's own transaction:
	// every memory stored is named by a remember event (none was stored
	// whose event met the full database).
	if int64(audited) != total {
		t.Fatalf("remember events name %d of the %d memories stored", audited, total)
	}
	// Control: a remember that fits would be a 201 (the fill proved it);
	// here a batch and a single memory both fail and store nothing.
	for _, body := range []string{batchJSON("refused-batch", 8), memoryJSON("refused-single")} {
		status, b := a.do("POST", "/v1/memories", body)
		if code, _ := errorOf(b); status != http.StatusServiceUnavailable || code != "unavailable" {
			t.Fatalf("a write while full: %d %s, want 503 unavailable", status, b)
		}
	}
	if got := a.total(); got != total {
		t.Fatalf("refused writes changed the count: %d, then %d", total, got)
	}
	if n := a.listed("refused-"); n != 0 {
		t.Fatalf("%d memories of refused writes are listed", n)
	}
	if got := a.remembers(); got != audited {
		t.Fatalf("refused writes changed the audit log: %d remember events, then %d", audited, got)
	}
	// Reads answer.
	a.ok(http.StatusOK, "GET", "/v1/memories/"+acked[0]+"?principal=alice", "")
	a.ok(http.StatusOK, "GET", "/v1/memories/"+acked[len(acked)-1]+"?principal=alice", "")
	if n := a.listed(plantedFault); n == 0 {
		t.Fatal("list while full found nothing")
	}
	// A recall is answered only once its audit event is committed (group
	// commit, engine/audit.go): while the database cannot take the event,
	// the recall answers 503 naming the condition and returns nothing.
	// checkAllReadable is the control: the same recall once there is room.
	// (An event may still fit where the memory did not, in a page the
	// database already has: then the recall is answered, and its event
	// must be in the log.)
	status, rb := a.do("POST", "/v1/recall", recallJSON)
	if status == http.StatusOK {
		var rec struct {
			RecallID string `json:"recall_id"`
		}
		json.Unmarshal(rb, &rec)
		var page struct {
			Events []json.RawMessage `json:"events"`
		}
		json.Unmarshal(a.ok(http.StatusOK, "GET", "/v1/audit?recall_id="+url.QueryEscape(rec.RecallID), ""), &page)
		if rec.RecallID == "" || len(page.Events) != 1 {
			t.Fatalf("a recall answered while full is not in the audit log (%d events of %q)", len(page.Events), rec.RecallID)
		}
		t.Log("a recall's event fitted while full: answered and audited")
		return
	}
	if code, msg := errorOf(rb); status != http.StatusServiceUnavailable || code != "unavailable" || !strings.Contains(msg, wantMsg) {
		t.Fatalf("recall while full: %d %s, want 503 unavailable naming %q (or 200 and audited)", status, rb, wantMsg)
	}
	if strings.Contains(string(rb), plantedFault) {
		t.Fatalf("the refused recall shows content: %s", rb)
	}
}

const recallJSON = `{"principal":"alice","query":"When do the tomatoes by the south fence want water?"}`

// checkRecall asserts a recall answers 200 with results.
func checkRecall(t *testing.T, a *api) {
	t.Helper()
	var rec struct {
		Results []json.RawMessage `json:"results"`
	}
	json.Unmarshal(a.ok(http.StatusOK, "POST", "/v1/recall", recallJSON), &rec)
	if len(rec.Results) == 0 {
		t.Fatal("recall found nothing")
	}
}

// checkAllReadable asserts every acknowledged id still answers 200, and
// a recall finds memories.
func checkAllReadable(t *testing.T, a *api, acked []string) {
	t.Helper()
	checkRecall(t, a)
	for _, id := range acked {
		if status, b := a.do("GET", "/v1/memories/"+id+"?principal=alice", ""); status != http.StatusOK {
			t.Fatalf("acknowledged memory %s: %d %s", id, status, b)
		}
	}
}

// checkIntegrity runs PRAGMA integrity_check on the database file, on a
// read-only connection of its own.
func checkIntegrity(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check: %q, %v", res, err)
	}
}

// TestMaxDBBytesOverHTTP fills a server's database to its size cap
// (Config.MaxDBBytes, serve --max-db-bytes) and checks a full database
// over HTTP: 503 unavailable naming the condition, a refused batch stores
// nothing, reads answer, and writes succeed again after deletes free room
// and after a restart with a larger cap, with no acknowledged memory lost.
func TestMaxDBBytesOverHTTP(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.db")
	const capBytes = 1 << 20
	s := startServer(t, server.Config{DB: path, MaxDBBytes: capBytes}, "")
	a := newAPI(t, s.base, s.key)

	acked := idsOf(t, a.ok(http.StatusCreated, "POST", "/v1/memories", batchJSON("control", 8)))
	more, full := fill(t, a, "fill", 400)
	acked = append(acked, more...)
	t.Logf("%d memories stored under a %d-byte cap", len(acked), capBytes)
	checkFull(t, a, full, "the database is full", acked)
	checkIntegrity(t, path)
	if st, err := os.Stat(path); err != nil || st.Size() > capBytes {
		t.Fatalf("the database file: %v, %v; want at most %d bytes", st.Size(), err, capBytes)
	}

	// Deletes free room: a write fits again without a restart.
	for _, id := range acked[:4] {
		a.ok(http.StatusOK, "DELETE", "/v1/memories/"+id+"?principal=alice", "")
	}
	acked = acked[4:]
	acked = append(acked, idsOf(t, a.ok(http.StatusCreated, "POST", "/v1/memories", memoryJSON("after-delete")))...)

	// A restart with a larger cap lets a batch in.
	s.stop()
	s = startServer(t, server.Config{DB: path, MaxDBBytes: 2 * capBytes}, s.key)
	a = newAPI(t, s.base, s.key)
	acked = append(acked, idsOf(t, a.ok(http.StatusCreated, "POST", "/v1/memories", batchJSON("larger-cap", 8)))...)
	if got := a.total(); got != int64(len(acked)) {
		t.Fatalf("after the restart: %d memories, %d acknowledged and not deleted", got, len(acked))
	}
	checkAllReadable(t, a, acked)
}

func TestMaxDBBytesConfig(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]server.Config{
		"negative":      {MaxDBBytes: -1},
		"on postgresql": {Postgres: "postgres://u@127.0.0.1:1/db", MaxDBBytes: 1 << 20},
	} {
		if err := c.WithDefaults().Validate(); err == nil || !strings.Contains(err.Error(), "--max-db-bytes") {
			t.Errorf("%s: %v, want an error naming --max-db-bytes", name, err)
		}
	}
	if err := (server.Config{MaxDBBytes: 1 << 20}).WithDefaults().Validate(); err != nil {
		t.Errorf("control: a cap on SQLite: %v", err)
	}
}

// requirePrivilege ends a test that needs root (or a tool) it does not
// have: a skip on a developer's machine, a failure in CI (CI set) or
// wherever MEMGATE_REQUIRE_ROOT=1 (scripts/test runs as root in CI).
func requirePrivilege(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" || os.Getenv("MEMGATE_REQUIRE_ROOT") == "1" {
		t.Fatalf("%s: in CI this is a failure, not a skip", msg)
	}
	t.Skipf("%s (needs root; set MEMGATE_REQUIRE_ROOT=1 to make it a failure)", msg)
}

// mountTmpfs mounts a tmpfs of size bytes on a new directory and unmounts
// it when the test ends (after what the test registers later, such as a
// server, has stopped).
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		requirePrivilege(t, "a tmpfs needs Linux")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.FormatInt(size, 10), "memgate-fault-test", dir).CombinedOutput(); err != nil {
		requirePrivilege(t, "mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// TestFullDisk runs a server with its database on a small tmpfs, writes
// until the disk is full, and checks a full disk over HTTP: 503
// unavailable naming it, a refused batch stores nothing, reads answer, the
// file is sound, and writes succeed again, without a restart, once the
// file system is made larger; no acknowledged memory is lost.
func TestFullDisk(t *testing.T) {
	t.Parallel()
	dir := mountTmpfs(t, 1<<20)
	path := filepath.Join(dir, "m.db")
	s := startServer(t, server.Config{DB: path}, "")
	a := newAPI(t, s.base, s.key)

	acked := idsOf(t, a.ok(http.StatusCreated, "POST", "/v1/memories", batchJSON("control", 8)))
	more, full := fill(t, a, "fill", 400)
	acked = append(acked, more...)
	t.Logf("%d memories stored on a 1 MiB tmpfs", len(acked))
	checkFull(t, a, full, "the database is full", acked)
	checkIntegrity(t, path)

	if out, err := exec.Command("mount", "-o", "remount,size="+strconv.Itoa(8<<20), dir).CombinedOutput(); err != nil {
		t.Fatalf("remount larger: %v: %s", err, out)
	}
	acked = append(acked, idsOf(t, a.ok(http.StatusCreated, "POST", "/v1/memories", batchJSON("after-remount", 8)))...)
	if got := a.total(); got != int64(len(acked)) {
		t.Fatalf("after the remount: %d memories, %d acknowledged", got, len(acked))
	}
	checkAllReadable(t, a, acked)
	checkIntegrity(t, path)
}

// buildMemgate builds cmd/memgate into a temporary directory.
func buildMemgate(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "memgate")
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if p, err := exec.LookPath("go"); err == nil {
		goTool = p
	}
	if out, err := exec.Command(goTool, "build", "-o", bin, "../cmd/memgate").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestIOErrorChild runs "memgate serve" as a child under a file size limit
// (RLIMIT_FSIZE, set with prlimit; Go ignores SIGXFSZ, so a write past the
// limit fails with EFBIG and SQLite reports an I/O error), writes until the
// limit is met, and checks an I/O error over HTTP: 503 unavailable naming
// it, a refused batch stores nothing, reads answer, and writes succeed
// again once the limit is lifted from the running process.
func TestIOErrorChild(t *testing.T) {
	t.Parallel()
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		requirePrivilege(t, "prlimit (util-linux) is not installed")
	}
	bin := buildMemgate(t)
	path := filepath.Join(t.TempDir(), "m.db")
	const limit = 1 << 20
	// soft:hard, so that the soft limit can be raised again without
	// privilege.
	cmd := exec.Command(prlimit, "--fsize="+strconv.Itoa(limit)+":unlimited", "--",
		bin, "serve", "--addr", "127.0.0.1:0", "--db", path, "--rate", "-1", "--sweep-every", "0")
	cmd.Env = append(os.Environ(), "MEMGATE_POSTGRES_URL=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if strings.Contains(stderr.String(), plantedFault) {
			t.Errorf("the child's log holds memory content:\n%s", stderr.String())
		}
	})
	ready := make(chan serveout.Banner, 1)
	go func() {
		if !serveout.Scan(stdout, func(b serveout.Banner) { ready <- b }) {
			close(ready)
		}
	}()
	b, ok := <-ready
	if !ok || b.Key == "" {
		t.Fatalf("the child did not start serving (key found: %v):\n%s", b.Key != "", stderr.String())
	}
	a := newAPI(t, b.URL, b.Key)

	acked := idsOf(t, a.ok(http.StatusCreated, "POST", "/v1/memories", batchJSON("control", 8)))
	more, failed := fill(t, a, "fill", 400)
	acked = append(acked, more...)
	t.Logf("%d memories stored under a %d-byte file size limit", len(acked), limit)
	checkFull(t, a, failed, "I/O error", acked)
	checkIntegrity(t, path)

	// Lift the limit from the running server: writes resume.
	if out, err := exec.Command(prlimit, "--pid", strconv.Itoa(cmd.Process.Pid), "--fsize=unlimited:unlimited").CombinedOutput(); err != nil {
		t.Fatalf("prlimit --pid: %v: %s", err, out)
	}
	acked = append(acked, idsOf(t, a.ok(http.StatusCreated, "POST", "/v1/memories", batchJSON("after-limit", 8)))...)
	if got := a.total(); got != int64(len(acked)) {
		t.Fatalf("after lifting the limit: %d memories, %d acknowledged", got, len(acked))
	}
	checkAllReadable(t, a, acked)
	checkIntegrity(t, path)
}
