package logfmt

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"
)

// TestDurationsAreStrings: a time.Duration attribute, at the top level or
// in a group, is written as its Go string, as one passed as a string is;
// other values keep their JSON types.
func TestDurationsAreStrings(t *testing.T) {
	var buf bytes.Buffer
	log := New(&buf, nil)
	log.Info("done", "took", 352820*time.Nanosecond, "stopped", (2 * time.Second).String(), "n", 3,
		slog.Group("model", slog.Duration("took", 1500*time.Millisecond)))
	log.Debug("hidden")
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	if got["took"] != "352.82µs" || got["stopped"] != "2s" || got["n"] != float64(3) {
		t.Errorf("log line %s", buf.Bytes())
	}
	if m, _ := got["model"].(map[string]any); m["took"] != "1.5s" {
		t.Errorf("grouped duration: %s", buf.Bytes())
	}
	if bytes.Contains(buf.Bytes(), []byte("hidden")) {
		t.Errorf("a debug line at the default level: %s", buf.Bytes())
	}
}
