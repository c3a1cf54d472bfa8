package server_test

import (
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memgate/memgate/server"
)

// The profiler listens on loopback only, on its own address, and serves
// /debug/pprof/ there without a key.
func TestPprofAddr(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:6060", ":6060", "192.0.2.1:6060", "example.com:6060"} {
		if err := (server.Config{PprofAddr: addr}).WithDefaults().Validate(); err == nil || !strings.Contains(err.Error(), "--pprof-addr") {
			t.Errorf("--pprof-addr %s: %v, want refused naming the flag", addr, err)
		}
	}
	// Control: a loopback address is accepted and serves the profiler.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if err := (server.Config{PprofAddr: addr}).WithDefaults().Validate(); err != nil {
		t.Fatalf("--pprof-addr %s: %v", addr, err)
	}
	s := startServer(t, server.Config{DB: filepath.Join(t.TempDir(), "m.db"), PprofAddr: addr}, "")
	resp, err := http.Get("http://" + addr + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(b) == 0 {
		t.Fatalf("GET /debug/pprof/cmdline: %d %q", resp.StatusCode, b)
	}
	// The API's own address does not serve it.
	if resp, err := http.Get(s.base + "/debug/pprof/cmdline"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("the API address serves the profiler")
		}
	}
}
