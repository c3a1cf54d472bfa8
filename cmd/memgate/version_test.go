package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/memgate/memgate/internal/buildinfo"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stampFlag is the link flag a release build sets the version with.
const stampFlag = "-X github.com/memgate/memgate/internal/buildinfo.Version="

// unstamped are the flags of a plain build: -buildvcs=true records the
// revision from a git checkout whatever GOFLAGS says (and nothing outside
// one).
var unstamped = []string{"-buildvcs=true"}

// The binaries the tests build, shared by the tests that want the same
// build flags (a build takes seconds), and removed by TestMain.
var built struct {
	sync.Mutex
	dir  string
	bins map[string]*binary
}

type binary struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// goTool is the go command that runs the tests.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// buildMemgate builds this command with the go build flags given and
// returns the binary's path, built once per set of flags.
func buildMemgate(t *testing.T, flags ...string) string {
	t.Helper()
	key := strings.Join(flags, "\x00")
	built.Lock()
	if built.bins == nil {
		dir, err := os.MkdirTemp("", "memgate-test-bin-")
		if err != nil {
			built.Unlock()
			t.Fatal(err)
		}
		built.dir, built.bins = dir, map[string]*binary{}
	}
	b := built.bins[key]
	if b == nil {
		b = &binary{path: filepath.Join(built.dir, fmt.Sprintf("memgate-%d", len(built.bins)))}
		if runtime.GOOS == "windows" {
			b.path += ".exe"
		}
		built.bins[key] = b
	}
	built.Unlock()
	b.once.Do(func() {
		args := append(append([]string{"build"}, flags...), "-o", b.path, ".")
		b.out, b.err = exec.Command(goTool(), args...).CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("go build %v: %v\n%s", flags, b.err, b.out)
	}
	return b.path
}

// runBinary runs bin with args and returns its exit status, stdout and
// stderr.
func runBinary(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "MEMGATE_SERVER=", "MEMGATE_DB=")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return code, out.String(), errb.String()
}

// mcpServerVersion starts "bin mcp" on db and returns the version its
// initialize handshake reports.
func mcpServerVersion(t *testing.T, bin, db string) string {
	t.Helper()
	cmd := exec.Command(bin, "mcp", "--db", db, "--tenant", "acme", "--principal", "alice")
	cmd.Env = append(os.Environ(), "MEMGATE_SERVER=")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	defer cs.Close()
	return cs.InitializeResult().ServerInfo.Version
}

// TestVersionStamped: a release build's stamp is what version, --version,
// version --json and the MCP handshake report, all alike.
func TestVersionStamped(t *testing.T) {
	t.Parallel()
	const v = "v9.9.9-test"
	bin := buildMemgate(t, "-ldflags="+stampFlag+v)
	code, out, errs := runBinary(t, bin, "version")
	if code != 0 || !strings.HasPrefix(out, "memgate "+v) || strings.Count(out, "\n") != 1 || errs != "" {
		t.Fatalf("version: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, again, _ := runBinary(t, bin, "--version"); code != 0 || again != out {
		t.Fatalf("--version: exit %d, %q; version printed %q", code, again, out)
	}
	code, js, _ := runBinary(t, bin, "version", "--json")
	var info buildinfo.Info
	if err := json.Unmarshal([]byte(js), &info); code != 0 || err != nil || info.Version != v || info.GoVersion != runtime.Version() {
		t.Fatalf("version --json: exit %d, %q (%v)", code, js, err)
	}
	if got := mcpServerVersion(t, bin, existingDB(t)); got != v {
		t.Fatalf("MCP initialize reports version %q, want %q", got, v)
	}
	// Control: the in-process command, unstamped, reports the test
	// binary's version, not the stamp.
	var stdout strings.Builder
	if code := run(context.Background(), []string{"version"}, strings.NewReader(""), &stdout, &strings.Builder{}); code != 0 || strings.Contains(stdout.String(), v) {
		t.Fatalf("in-process version: exit %d, %q", code, stdout.String())
	}
}

// TestVersionUnstamped: without a stamp the version is the module's
// ("(devel)" when Go recorded no VCS information; from a git checkout Go
// derives it from the tags and the commit), and a build from a git
// checkout names its revision. -buildvcs=true asks for the revision
// whatever GOFLAGS says; git decides what is deterministic here.
func TestVersionUnstamped(t *testing.T) {
	t.Parallel()
	bin := buildMemgate(t, unstamped...)
	code, js, errs := runBinary(t, bin, "version", "--json")
	var info buildinfo.Info
	if err := json.Unmarshal([]byte(js), &info); code != 0 || err != nil || info.Version == "" {
		t.Fatalf("version --json: exit %d, %q, %q (%v)", code, js, errs, err)
	}
	_, text, _ := runBinary(t, bin, "version")
	// Go records VCS information only for a module inside a git
	// repository's main working tree (a .git directory: a linked
	// worktree's .git file is not looked for).
	gomod, _ := exec.Command("go", "env", "GOMOD").Output()
	fi, statErr := os.Stat(filepath.Join(filepath.Dir(strings.TrimSpace(string(gomod))), ".git"))
	head, gitErr := exec.Command("git", "rev-parse", "HEAD").Output()
	if gitErr != nil || statErr != nil || !fi.IsDir() {
		// Not a git checkout (or no git): nothing recorded.
		if info.Version != "(devel)" || info.Revision != "" {
			t.Fatalf("outside git: %+v, want (devel) and no revision", info)
		}
		if text != "memgate (devel) "+runtime.Version()+"\n" {
			t.Fatalf("version: %q", text)
		}
		return
	}
	rev := strings.TrimSpace(string(head))
	if info.Revision != rev || !strings.Contains(text, "("+rev[:12]) {
		t.Fatalf("built from commit %s: --json %+v, text %q", rev, info, text)
	}
}

// TestVersionSaysWhenNoCommitIsRecorded: a build without VCS stamping
// (GOFLAGS=-buildvcs=false) says the commit is not recorded instead of
// printing none (issue 28); a build that records one (the control) names
// it and says nothing of the kind.
func TestVersionSaysWhenNoCommitIsRecorded(t *testing.T) {
	t.Parallel()
	code, out, _ := runBinary(t, buildMemgate(t, "-buildvcs=false"), "version")
	if code != 0 || !strings.Contains(out, "commit not recorded") || !strings.Contains(out, runtime.Version()) {
		t.Fatalf("-buildvcs=false: exit %d, %q", code, out)
	}
	if _, err := exec.Command("git", "rev-parse", "--git-dir").Output(); err != nil {
		t.Fatalf("the control needs the git checkout the tests run in: %v", err)
	}
	code, out, _ = runBinary(t, buildMemgate(t, unstamped...), "version")
	if code != 0 || strings.Contains(out, "not recorded") || !strings.Contains(out, "(") {
		t.Fatalf("-buildvcs=true: exit %d, %q", code, out)
	}
}
