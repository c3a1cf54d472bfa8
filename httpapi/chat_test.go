package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/agent"
	"github.com/memgate/memgate/agent/agenttest"
)

// withChat gives the harness an agent over its engine and the fake model,
// logging to the harness's logs (which must then hold no planted marker).
func withChat(t *testing.T, llm *agenttest.Server, extract bool) func(*setup) {
	return func(s *setup) {
		if s.eng == nil {
			return // the pass before the engine exists
		}
		ag, err := agent.New(agent.Config{Engine: s.eng, Model: llm.Model(t), Extract: extract, Logger: s.api.Logger})
		if err != nil {
			t.Fatal(err)
		}
		s.api.Agent = ag
	}
}

// chatResult is the response of POST /v1/chat as a client reads it.
type chatResult struct {
	Conversation string `json:"conversation"`
	Reply        string `json:"reply"`
	Model        struct {
		Provider string `json:"provider"`
		Model    string `json:"model"`
	} `json:"model"`
	Recall struct {
		RecallID string `json:"recall_id"`
		Results  []struct {
			Memory memgate.Memory `json:"memory"`
			Score  float64        `json:"score"`
		} `json:"results"`
		Context string          `json:"context"`
		Explain *map[string]any `json:"explain"`
	} `json:"recall"`
	Remembered []agent.Outcome   `json:"remembered"`
	Extraction *agent.Extraction `json:"extraction"`
}

func (h *harness) chat(key string, body map[string]any) chatResult {
	h.t.Helper()
	var out chatResult
	h.do("POST", "/v1/chat", key, body).want(h.t, http.StatusOK).decode(h.t, &out)
	return out
}

// promptsHold reports whether any prompt the model received holds s.
func promptsHold(llm *agenttest.Server, s string) bool {
	for _, r := range llm.Requests() {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, s) {
				return true
			}
		}
	}
	return false
}

// TestChatNeverInjectsAnotherPrincipal: an agent key bound to alice
// chats about something bob has related memories of; only alice's
// memory reaches the prompt and the response. The control: chatting as
// bob injects bob's memory, so it is related.
func TestChatNeverInjectsAnotherPrincipal(t *testing.T) {
	t.Parallel()
	llm := agenttest.NewServer(t)
	h := newHarness(t, withChat(t, llm, false))
	admin := h.key("acme", memgate.RoleAdmin, "", "")
	aliceKey := h.key("acme", memgate.RoleAgent, "alice", "")
	unbound := h.key("acme", memgate.RoleAgent, "", "")
	alice := h.remember(admin, fact("alice", "Alice is allergic to peanuts and carries an epinephrine pen."))
	bob := h.remember(admin, fact("bob", "Bob is allergic to peanuts and hazelnuts zqxjvarnish."))
	msg := "I am allergic to peanuts, what snack can I eat?"

	for name, body := range map[string]map[string]any{
		"bound key":   {"message": msg},
		"bound again": {"principal": "alice", "message": msg},
		"unbound key": {"principal": "alice", "message": msg},
	} {
		key := aliceKey
		if name == "unbound key" {
			key = unbound
		}
		before := len(llm.Requests())
		res := h.chat(key, body)
		sys := llm.Requests()[before].System()
		if !strings.Contains(sys, alice.ID) || strings.Contains(sys, bob.ID) || strings.Contains(sys, "hazelnuts") {
			t.Fatalf("%s: prompt:\n%s", name, sys)
		}
		if len(res.Recall.Results) != 1 || res.Recall.Results[0].Memory.ID != alice.ID || res.Recall.Results[0].Score <= 0 || res.Recall.Explain == nil {
			t.Fatalf("%s: recall %+v", name, res.Recall)
		}
		for _, o := range res.Remembered {
			if m := h.get("acme", o.ID); m.Principal != "alice" {
				t.Fatalf("%s: remembered for %s", name, m.Principal)
			}
		}
	}
	// The bound key may not name bob; nothing reaches the model.
	before := len(llm.Requests())
	h.do("POST", "/v1/chat", aliceKey, map[string]any{"principal": "bob", "message": msg}).wantError(t, http.StatusForbidden, memgate.EFORBIDDEN, "principal")
	if len(llm.Requests()) != before {
		t.Fatal("a refused chat reached the model")
	}
	// Control: bob's memory is related to the message.
	res := h.chat(unbound, map[string]any{"principal": "bob", "message": msg})
	if len(res.Recall.Results) != 1 || res.Recall.Results[0].Memory.ID != bob.ID || !strings.Contains(llm.Requests()[len(llm.Requests())-1].System(), bob.ID) {
		t.Fatalf("control: bob's chat did not inject bob's memory: %+v", res.Recall)
	}
}

// TestChatForbiddenToUserKeys: a user key may not remember, so it may not
// chat; the model is never called.
func TestChatForbiddenToUserKeys(t *testing.T) {
	t.Parallel()
	llm := agenttest.NewServer(t)
	h := newHarness(t, withChat(t, llm, false))
	user := h.key("acme", memgate.RoleUser, "alice", "")
	h.do("POST", "/v1/chat", user, map[string]any{"message": "hello"}).wantError(t, http.StatusForbidden, memgate.EFORBIDDEN, "")
	if n := len(llm.Requests()); n != 0 {
		t.Fatalf("%d model calls", n)
	}
	// Control: an agent key for the same principal may.
	agentKey := h.key("acme", memgate.RoleAgent, "alice", "")
	h.chat(agentKey, map[string]any{"message": "hello"})
}

// TestChatWithoutModel: a server started without --llm says so.
func TestChatWithoutModel(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentKey := h.key("acme", memgate.RoleAgent, "", "")
	r := h.do("POST", "/v1/chat", agentKey, map[string]any{"principal": "alice", "message": "hello"})
	r.wantError(t, http.StatusServiceUnavailable, memgate.EUNAVAILABLE, "")
	if _, _, msg := r.apiError(t); !strings.Contains(msg, "--llm") {
		t.Fatalf("message %q does not say how to start with a model", msg)
	}
	// Authorization still comes first.
	user := h.key("acme", memgate.RoleUser, "alice", "")
	h.do("POST", "/v1/chat", user, map[string]any{"message": "hello"}).wantError(t, http.StatusForbidden, memgate.EFORBIDDEN, "")
	h.do("POST", "/v1/chat", "", map[string]any{"message": "hello"}).wantError(t, http.StatusUnauthorized, memgate.EUNAUTHORIZED, "")
}

// TestChatRequestValidation: the body is decoded strictly and the scope
// derived from the key.
func TestChatRequestValidation(t *testing.T) {
	t.Parallel()
	llm := agenttest.NewServer(t)
	h := newHarness(t, withChat(t, llm, false))
	key := h.key("acme", memgate.RoleAgent, "", "")
	for name, tc := range map[string]struct {
		body   any
		status int
		code   string
		field  string
	}{
		"no body":          {"", http.StatusBadRequest, memgate.EINVALID, ""},
		"unknown field":    {map[string]any{"principal": "alice", "message": "hi", "k": 3}, http.StatusBadRequest, memgate.EINVALID, "k"},
		"no principal":     {map[string]any{"message": "hi"}, http.StatusBadRequest, memgate.EINVALID, "principal"},
		"blank message":    {map[string]any{"principal": "alice", "message": "  "}, http.StatusBadRequest, memgate.EINVALID, "message"},
		"no message":       {map[string]any{"principal": "alice"}, http.StatusBadRequest, memgate.EINVALID, "message"},
		"huge message":     {map[string]any{"principal": "alice", "message": strings.Repeat("a", 9000)}, http.StatusRequestEntityTooLarge, memgate.ETOOLARGE, "message"},
		"other tenant":     {map[string]any{"tenant": "globex", "principal": "alice", "message": "hi"}, http.StatusForbidden, memgate.EFORBIDDEN, "tenant"},
		"bad principal":    {map[string]any{"principal": "a b", "message": "hi"}, http.StatusBadRequest, memgate.EINVALID, "principal"},
		"bad conversation": {map[string]any{"principal": "alice", "conversation": "x/y", "message": "hi"}, http.StatusBadRequest, memgate.EINVALID, "conversation"},
	} {
		t.Run(name, func(t *testing.T) {
			h.do("POST", "/v1/chat", key, tc.body).wantError(t, tc.status, tc.code, tc.field)
		})
	}
	if n := len(llm.Requests()); n != 0 {
		t.Fatalf("%d model calls for refused requests", n)
	}
}

// TestChatModelErrors: a failing model is answered with its code, never
// with the message text or the model's key.
func TestChatModelErrors(t *testing.T) {
	t.Parallel()
	llm := agenttest.NewServer(t)
	h := newHarness(t, withChat(t, llm, false))
	key := h.key("acme", memgate.RoleAgent, "", "")
	llm.Script(func(agenttest.Request) string { return "" }, nil) // an empty reply
	r := h.do("POST", "/v1/chat", key, map[string]any{"principal": "alice", "message": "quokkablimp says hi"})
	r.wantError(t, http.StatusServiceUnavailable, memgate.EUNAVAILABLE, "")
	if strings.Contains(string(r.body), "quokkablimp") || strings.Contains(string(r.body), agenttest.Key) {
		t.Fatalf("error body carries text or key: %s", r.body)
	}
	if n := h.count("acme"); n != 0 {
		t.Fatalf("%d memories stored after a failed turn", n)
	}
	if logs := h.logs.String(); strings.Contains(logs, agenttest.Key) || strings.Contains(logs, "says hi") || !strings.Contains(logs, `"msg":"chat model failed"`) {
		t.Fatalf("logs:\n%s", logs)
	}
}

// TestChatTwoSessions is the done-when: in session one the person
// tells a fact, extraction proposes it, an admin approves it; session two
// (a new conversation) asks about it, the model's prompt carries it and
// the response's recall lists it with its score. Nothing of another
// principal ever appears.
func TestChatTwoSessions(t *testing.T) {
	t.Parallel()
	llm := agenttest.NewServer(t)
	h := newHarness(t, withChat(t, llm, true))
	admin := h.key("acme", memgate.RoleAdmin, "", "")
	// Granted user: the person's turns are stored as theirs.
	agentKey := h.keyWith("acme", memgate.RoleAgent, "", "", memgate.SourceUser, memgate.SourceAssistant)
	bob := h.remember(admin, fact("bob", "Bob lives in Madrid zqxjvarnish."))

	// Session one.
	llm.Script(
		func(agenttest.Request) string { return "Lisbon is a lovely city for cycling." },
		func(agenttest.Request) string {
			return `{"memories":[{"kind":"fact","content":"Alice lives in Lisbon.","reason":"she said where she lives"}]}`
		})
	one := h.chat(agentKey, map[string]any{"principal": "alice", "conversation": "s1", "message": "I live in Lisbon and I cycle to work every day."})
	if one.Conversation != "s1" || one.Reply != "Lisbon is a lovely city for cycling." || one.Model.Provider != "openai" || one.Model.Model != "gpt-test"+agenttest.ModelSuffix {
		t.Fatalf("session one: %+v", one)
	}
	if len(one.Remembered) != 2 || one.Remembered[0].Source != memgate.SourceUser || one.Remembered[1].Source != memgate.SourceAssistant {
		t.Fatalf("session one remembered %+v", one.Remembered)
	}
	x := one.Extraction
	if x == nil || x.Stored != 1 || len(x.PendingIDs) != 1 || x.Memories[0].Content != "Alice lives in Lisbon." {
		t.Fatalf("session one extraction %+v", x)
	}
	lisbon := x.PendingIDs[0]
	if m := h.get("acme", lisbon); m.Status != memgate.StatusPending || m.Conversation != "" || m.Principal != "alice" || m.Source != memgate.SourceAssistant {
		t.Fatalf("proposed memory %+v", m)
	}
	h.do("POST", "/v1/memories/"+lisbon+"/approve?principal=alice", admin, nil, "If-Match", "1").want(t, http.StatusOK)

	// Session two: a new conversation, named by the server.
	llm.Script(func(agenttest.Request) string { return "You live in Lisbon." }, func(agenttest.Request) string { return `{"memories":[]}` })
	two := h.chat(agentKey, map[string]any{"principal": "alice", "message": "Where do I live?"})
	if two.Conversation == "" || two.Conversation == "s1" {
		t.Fatalf("session two conversation %q", two.Conversation)
	}
	reqs := llm.Requests()
	var prompt string
	for _, r := range reqs {
		if !r.JSON {
			prompt = r.System() // the last chat call's
		}
	}
	if !strings.Contains(prompt, "Alice lives in Lisbon.") || !strings.Contains(prompt, lisbon) {
		t.Fatalf("session two prompt lacks the fact:\n%s", prompt)
	}
	found := false
	for _, r := range two.Recall.Results {
		if r.Memory.ID == lisbon && r.Score > 0 {
			found = true
		}
		if r.Memory.Principal != "alice" {
			t.Fatalf("recall returned %s's memory", r.Memory.Principal)
		}
		if r.Memory.Conversation == "s1" {
			t.Fatal("session two recalled session one's turns")
		}
	}
	if !found || !strings.Contains(two.Recall.Context, lisbon) {
		t.Fatalf("session two recall does not list the fact with a score: %+v", two.Recall)
	}
	if promptsHold(llm, "Madrid") || promptsHold(llm, bob.ID) {
		t.Fatal("bob's memory reached a prompt")
	}
	// The response is exactly the documented shape.
	raw := h.do("POST", "/v1/chat", agentKey, map[string]any{"principal": "alice", "conversation": two.Conversation, "message": "Thanks!"}).want(t, http.StatusOK).json(t)
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	if len(keys) != 6 || raw["extraction"] == nil || raw["recall"] == nil || raw["remembered"] == nil {
		t.Fatalf("response keys %v", keys)
	}
}

// TestChatFactsInKeysAgent: a key bound to an agent stores the proposed
// facts in that agent, never wider.
func TestChatFactsInKeysAgent(t *testing.T) {
	t.Parallel()
	llm := agenttest.NewServer(t)
	h := newHarness(t, withChat(t, llm, true))
	key := h.key("acme", memgate.RoleAgent, "alice", "helper")
	llm.Script(nil, func(agenttest.Request) string {
		return `{"memories":[{"kind":"preference","content":"Alice prefers short answers."}]}`
	})
	res := h.chat(key, map[string]any{"message": "Please keep answers short."})
	if res.Extraction == nil || len(res.Extraction.PendingIDs) != 1 {
		t.Fatalf("extraction %+v", res.Extraction)
	}
	m := h.get("acme", res.Extraction.PendingIDs[0])
	if m.Agent != "helper" || m.Conversation != "" || m.Kind != memgate.KindPreference {
		t.Fatalf("stored %+v", m)
	}
	for _, o := range res.Remembered {
		if got := h.get("acme", o.ID); got.Agent != "helper" || got.Conversation != res.Conversation {
			t.Fatalf("turn stored %+v", got)
		}
	}
}
