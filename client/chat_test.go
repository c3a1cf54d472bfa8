package client_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/agent"
	"github.com/memgate/memgate/agent/agenttest"
	"github.com/memgate/memgate/client"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/guard"
	"github.com/memgate/memgate/httpapi"
	"github.com/memgate/memgate/sqlite"
)

// TestChatAgainstTheServer: Client.Chat against the real API with an
// agent over the fake model: the reply, the recall receipts and the
// remembered turns come back decoded; a user key is forbidden.
func TestChatAgainstTheServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Store: db, Embedder: builtin.New()})
	if err != nil {
		t.Fatal(err)
	}
	llm := agenttest.NewServer(t)
	ag, err := agent.New(agent.Config{Engine: eng, Model: llm.Model(t)})
	if err != nil {
		t.Fatal(err)
	}
	g, err := guard.New(guard.Config{Engine: eng, RateLimit: guard.RateLimit{PerSecond: -1}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpapi.New(httpapi.Config{Guard: g, Agent: ag})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); eng.Close(); db.Close() })
	s := &liveServer{url: srv.URL, db: db}

	c := s.client(t, memgate.Key{Tenant: "acme", Role: memgate.RoleAgent, Principal: "alice"})
	m, err := eng.Remember(ctx, engine.RememberRequest{Memory: memgate.Memory{Tenant: "acme", Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "Alice is allergic to peanuts."}})
	if err != nil {
		t.Fatal(err)
	}
	llm.Script(func(agenttest.Request) string { return "Try rice crackers." }, nil)
	res, err := c.Chat(ctx, client.ChatRequest{Message: "I am allergic to peanuts, what snack can I eat?"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reply != "Try rice crackers." || !strings.HasPrefix(res.Conversation, "c_") || len(res.Recall.Results) != 1 ||
		res.Recall.Results[0].Memory.ID != m.ID || len(res.Remembered) != 2 || res.Remembered[0].Status != "active" {
		t.Fatalf("chat %+v", res)
	}
	user := s.client(t, memgate.Key{Tenant: "acme", Role: memgate.RoleUser, Principal: "alice"})
	_, err = user.Chat(ctx, client.ChatRequest{Message: "hello"})
	requireCode(t, "user chat", err, memgate.EFORBIDDEN)
}
