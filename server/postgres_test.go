package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/memgate/memgate/postgres/pgtest"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/server"
)

// TestRunOnPostgres serves the API over PostgreSQL: the first start
// creates the admin key, remember and recall work over HTTP, a second
// server on the same database creates no key and reads what the first
// wrote, and no log line holds the password.
func TestRunOnPostgres(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.SchemaURL(t)
	start := func(stdout, stderr *lockedBuffer) (addr string, stop func()) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		ready := make(chan string, 1)
		cfg := server.Config{Addr: "127.0.0.1:0", Postgres: dbURL, BootstrapTenant: "acme", Ready: func(a string) { ready <- a }}
		done := make(chan error, 1)
		go func() { done <- server.Run(ctx, cfg, stdout, stderr) }()
		select {
		case addr = <-ready:
		case err := <-done:
			t.Fatalf("Run returned before serving: %v\n%s", err, stderr.String())
		case <-time.After(30 * time.Second):
			t.Fatal("Run did not become ready")
		}
		return addr, func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		}
	}
	var stdout, stderr lockedBuffer
	addr, stop := start(&stdout, &stderr)
	defer stop()
	key := regexp.MustCompile(`mgk_[A-Za-z0-9_-]{43}`).FindString(stdout.String())
	if key == "" {
		t.Fatalf("no bootstrap key:\n%s", stdout.String())
	}
	call := func(addr, path, body string) map[string]any {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
		}
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("POST %s: %v: %s", path, err, b)
		}
		return out
	}
	call(addr, "/v1/memories", `{"principal":"alice","kind":"preference","source":"user","reason":"said in chat","content":"Alice drinks green tea, no sugar."}`)
	recall := func(addr string) []any {
		res, _ := call(addr, "/v1/recall", `{"principal":"alice","query":"What does Alice like to drink?"}`)["results"].([]any)
		return res
	}
	if got := recall(addr); len(got) != 1 || !strings.Contains(string(must(json.Marshal(got))), "green tea") {
		t.Fatalf("recall: %v", got)
	}
	// Control: an unrelated query returns nothing.
	if res, _ := call(addr, "/v1/recall", `{"principal":"alice","query":"How do I file quarterly taxes?"}`)["results"].([]any); len(res) != 0 {
		t.Fatalf("unrelated recall: %v", res)
	}

	// A second server on the same database: no new key, same memories.
	var stdout2, stderr2 lockedBuffer
	addr2, stop2 := start(&stdout2, &stderr2)
	if strings.Contains(stdout2.String(), "mgk_") {
		t.Fatalf("the second server created a key:\n%s", stdout2.String())
	}
	if got := recall(addr2); len(got) != 1 {
		t.Fatalf("recall through the second server: %v", got)
	}
	stop2()

	u, _ := url.Parse(dbURL)
	if pw, ok := u.User.Password(); ok && pw != "" {
		for _, out := range []string{stdout.String(), stderr.String(), stdout2.String(), stderr2.String()} {
			if strings.Contains(out, ":"+pw+"@") {
				t.Fatalf("output holds the database password:\n%s", out)
			}
		}
	}
}

func TestConfigRefusesBothDatabases(t *testing.T) {
	t.Parallel()
	c := server.Config{DB: "m.db", Postgres: "postgres://u:pw@127.0.0.1:1/db"}
	err := c.WithDefaults().Validate()
	if err == nil || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("Validate of --db with --postgres: %v", err)
	}
	if err := server.Run(context.Background(), c, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Fatal("Run accepted both databases")
	}
	// Control: PostgreSQL alone needs no DB default.
	if c := (server.Config{Postgres: "postgres://u@h/db"}).WithDefaults(); c.DB != "" || c.Validate() != nil {
		t.Fatalf("PostgreSQL alone: DB %q, %v", c.DB, c.Validate())
	}
	// An unreachable server: refused, without the password.
	var stderr bytes.Buffer
	err = server.Run(context.Background(), server.Config{Addr: "127.0.0.1:0", Postgres: "postgres://u:s3cr3t@127.0.0.1:1/db?connect_timeout=2"}, &bytes.Buffer{}, &stderr)
	if err == nil || strings.Contains(err.Error(), "s3cr3t") || strings.Contains(stderr.String(), "s3cr3t") {
		t.Fatalf("Run on an unreachable server: %v\n%s", err, stderr.String())
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
