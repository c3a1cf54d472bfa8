package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/internal/buildinfo"
	"github.com/memgate/memgate/internal/logtest"
	"github.com/memgate/memgate/server"
)

// lockedBuffer captures the log lines.
type lockedBuffer = logtest.Buffer

func TestRunServesUntilCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	var stdout, stderr lockedBuffer
	cfg := server.Config{
		Addr: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "m.db"), BootstrapTenant: "acme",
		Ready: func(addr string) { ready <- addr },
	}
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, cfg, &stdout, &stderr) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("Run returned before serving: %v\n%s", err, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not become ready")
	}
	if !strings.Contains(stdout.String(), `tenant "acme"`) || !strings.Contains(stdout.String(), "serving on http://"+addr) {
		t.Fatalf("stdout:\n%s", stdout.String())
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var health struct{ Status, Version string }
	err = json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || err != nil || health.Status != "ok" || health.Version != buildinfo.Get().Version {
		t.Fatalf("healthz: %d %+v %v, want ok and version %s", resp.StatusCode, health, err, buildinfo.Get().Version)
	}
	// The startup log line carries the version too.
	if !strings.Contains(stderr.String(), `"version"`) && !strings.Contains(stderr.String(), "version=") {
		t.Fatalf("startup log without the version:\n%s", stderr.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	if err := (server.Config{}).WithDefaults().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for name, c := range map[string]server.Config{
		"negative grace":   {SweepGrace: -time.Second},
		"negative timeout": {ReadTimeout: -time.Second},
		"bad tenant":       {BootstrapTenant: "a b"},
		"extract, no llm":  {Extract: true},
	} {
		if err := c.WithDefaults().Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
		if err := server.Run(context.Background(), c, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
			t.Errorf("%s: Run accepted it", name)
		}
	}
}
