// Package logfmt makes memgate's JSON logs (memgate serve, memgate mcp):
// one line per event, and every duration in one unit, a Go duration string
// ("took":"352.82µs", "sweep_every":"1h0m0s"), whether the call site
// passed a time.Duration (which slog's JSON handler would write as integer
// nanoseconds) or its String().
package logfmt

import (
	"io"
	"log/slog"
)

// New returns a JSON logger writing to w at level and above (nil: info).
func New(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: durations}))
}

// durations writes a time.Duration as its String().
func durations(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}
