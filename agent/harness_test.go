package agent_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/agent"
	"github.com/memgate/memgate/agent/agenttest"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/internal/logtest"
	"github.com/memgate/memgate/sqlite"
)

// testKey is the fake model's API key: never in an error or a log.
const testKey = agenttest.Key

// lockedBuffer captures the log lines.
type lockedBuffer = logtest.Buffer

// world is an agent over a real SQLite engine with the built-in embedder
// and the fake model, with every log line (engine and agent) captured.
type world struct {
	t    *testing.T
	eng  *engine.Engine
	llm  *agenttest.Server
	ag   *agent.Agent
	logs *lockedBuffer
}

func newWorld(t *testing.T, extract bool) *world {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	eng, err := engine.New(engine.Config{Store: db, Embedder: builtin.New(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(); db.Close() })
	llm := agenttest.NewServer(t)
	ag, err := agent.New(agent.Config{Engine: eng, Model: llm.Model(t), Extract: extract, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return &world{t: t, eng: eng, llm: llm, ag: ag, logs: logs}
}

// remember stores a memory directly through the engine.
func (w *world) remember(principal string, kind memgate.Kind, source memgate.Source, content string) string {
	w.t.Helper()
	r, err := w.eng.Remember(context.Background(), engine.RememberRequest{Memory: memgate.Memory{
		Tenant: "acme", Principal: principal, Kind: kind, Source: source, Content: content,
	}})
	if err != nil {
		w.t.Fatalf("remember: %v", err)
	}
	return r.ID
}

func (w *world) turn(principal, conversation, message string) *agent.Result {
	w.t.Helper()
	res, err := w.ag.Respond(context.Background(), agent.Turn{
		Scope:   memgate.Scope{Tenant: "acme", Principal: principal, Conversation: conversation},
		Message: message,
	})
	if err != nil {
		w.t.Fatalf("respond: %v", err)
	}
	return res
}

// all lists every memory of principal, whatever its status.
func (w *world) all(principal string) []*memgate.Memory {
	w.t.Helper()
	p, err := w.eng.List(context.Background(), memgate.Scope{Tenant: "acme", Principal: principal}, engine.ListRequest{Limit: 1000})
	if err != nil {
		w.t.Fatal(err)
	}
	return p.Memories
}

// noLeak fails the test if any log line holds one of the texts.
func (w *world) noLeak(texts ...string) {
	w.t.Helper()
	logs := w.logs.String()
	if !strings.Contains(logs, `"msg":"chat"`) {
		w.t.Errorf("no chat log line: the control failed:\n%s", logs)
	}
	for _, s := range append(texts, testKey) {
		if strings.Contains(logs, s) {
			w.t.Errorf("logs hold %q:\n%s", s, logs)
		}
	}
}
