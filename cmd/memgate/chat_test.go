package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/memgate/memgate/agent"
	"github.com/memgate/memgate/agent/agenttest"
)

// These tests set the model's key (and for --server the API key) with
// t.Setenv, so they do not run in parallel.

var convRE = regexp.MustCompile(`memgate chat: conversation (c_[0-9a-z]{26}) `)

// chatEnv clears the model settings of the environment and sets the fake
// model's key.
func chatEnv(t *testing.T) *agenttest.Server {
	t.Helper()
	for _, k := range []string{llmEnv, llmURLEnv, "MEMGATE_SERVER"} {
		t.Setenv(k, "")
	}
	t.Setenv(llmKeyEnv, agenttest.Key)
	return agenttest.NewServer(t)
}

func TestChatLocal(t *testing.T) {
	llm := chatEnv(t)
	db := newDB(t)
	peanuts := strings.TrimSpace(mustCLI(t, db, "remember", "--tenant", "t", "--principal", "alice", "Alice is allergic to peanuts and carries an epinephrine pen."))
	mustCLI(t, db, "remember", "--tenant", "t", "--principal", "bob", "Bob is allergic to peanuts too.")
	llm.Script(func(r agenttest.Request) string {
		if strings.Contains(r.Last().Content, "BGP") {
			return "Set cluster-id on the reflector."
		}
		return "Try rice crackers."
	}, nil)

	stdin := "I am allergic to peanuts, what snack can I eat?\n\nHow do I configure a BGP route reflector?\n/quit\nnever sent\n"
	code, out, errs := cli(t, db, stdin, "chat", "--tenant", "t", "--principal", "alice", "--llm", "openai:gpt-test", "--llm-url", llm.URL)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	m := convRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no conversation line:\n%s", out)
	}
	conv := m[1]
	if n := len(llm.Requests()); n != 2 {
		t.Fatalf("%d model calls, want 2 (blank line skipped, nothing after /quit)", n)
	}
	// Under the first reply, the injected memory with its score; under
	// the second, none.
	if !regexp.MustCompile(`Try rice crackers\.\n  \[1 injected \(recall r_\w+\)\]\n    0\.\d{3}  ` + peanuts + `  fact/user  Alice is allergic`).MatchString(out) {
		t.Fatalf("first turn:\n%s", out)
	}
	if !strings.Contains(out, "[no memories injected") || strings.Contains(out, "Bob") {
		t.Fatalf("output:\n%s", out)
	}
	// The exchange is remembered in the conversation.
	list := mustCLI(t, db, "list", "--tenant", "t", "--principal", "alice", "--conversation", conv, "--kind", "message", "--json")
	var page struct {
		Memories []struct {
			Source       string `json:"source"`
			Conversation string `json:"conversation"`
		} `json:"memories"`
	}
	if err := json.Unmarshal([]byte(list), &page); err != nil || len(page.Memories) != 4 {
		t.Fatalf("conversation %s holds %s", conv, list)
	}

	// --conversation continues one; --json prints one result per line.
	code, out, errs = cli(t, db, "Peanuts again?\n", "chat", "--tenant", "t", "--principal", "alice", "--conversation", conv, "--json", "--llm", "openai:gpt-test", "--llm-url", llm.URL)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res agent.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Conversation != conv || res.Reply != "Try rice crackers." || strings.Count(out, "\n") != 1 {
		t.Fatalf("json output %q (%v)", out, err)
	}
	if !strings.Contains(errs, "conversation "+conv) {
		t.Fatalf("stderr %q", errs)
	}
}

func TestChatLocalExtract(t *testing.T) {
	llm := chatEnv(t)
	db := existingDB(t)
	llm.Script(nil, func(agenttest.Request) string {
		return `{"memories":[{"kind":"fact","content":"Alice lives in Lisbon.","reason":"she said so"}]}`
	})
	code, out, errs := cli(t, db, "I live in Lisbon.\n", "chat", "--tenant", "t", "--principal", "alice", "--llm", "openai:gpt-test", "--llm-url", llm.URL, "--extract")
	if code != 0 || !regexp.MustCompile(`\[proposed fact m_\w+, pending approval: Alice lives in Lisbon\.\]`).MatchString(out) {
		t.Fatalf("exit %d: %s\n%s", code, out, errs)
	}
	pending := mustCLI(t, db, "list", "--tenant", "t", "--principal", "alice", "--status", "pending")
	if !strings.Contains(pending, "Alice lives in Lisbon.") {
		t.Fatalf("pending: %s", pending)
	}
}

func TestChatUsage(t *testing.T) {
	llm := chatEnv(t)
	db := existingDB(t)
	for name, tc := range map[string]struct {
		args []string
		code int
		want string
	}{
		"no model":      {[]string{"chat", "--tenant", "t", "--principal", "alice"}, 2, "needs a model"},
		"unknown model": {[]string{"chat", "--tenant", "t", "--principal", "alice", "--llm", "gpt4"}, 1, "unknown chat model"},
		"no model name": {[]string{"chat", "--tenant", "t", "--principal", "alice", "--llm", "ollama:"}, 1, "needs a model"},
		"extract alone": {[]string{"chat", "--tenant", "t", "--principal", "alice", "--extract"}, 1, "--extract"},
		"no tenant":     {[]string{"chat", "--principal", "alice", "--llm", "openai:m", "--llm-url", llm.URL}, 1, "tenant"},
		"arguments":     {[]string{"chat", "--tenant", "t", "--principal", "alice", "hello"}, 2, "standard input"},
	} {
		code, _, errs := cli(t, db, "hello\n", tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d: %s", name, code, errs)
		}
	}
	code, _, errs := remote(t, "http://127.0.0.1:1", "hello\n", "chat", "--principal", "alice", "--llm", "openai:m")
	if code != 2 || !strings.Contains(errs, "--llm applies to a local chat") {
		t.Errorf("--llm with --server: exit %d: %s", code, errs)
	}
	if n := len(llm.Requests()); n != 0 {
		t.Fatalf("%d model calls", n)
	}
	// A failing model: the message is reported, the session goes on, the
	// exit status says a message failed; nothing of the text or the key
	// is printed.
	llm.Script(func(agenttest.Request) string { return "" }, nil)
	code, _, errs = cli(t, db, "quokkablimp one\nquokkablimp two\n", "chat", "--tenant", "t", "--principal", "alice", "--llm", "openai:gpt-test", "--llm-url", llm.URL)
	if code != 1 || strings.Count(errs, "unavailable: llm openai") != 2 || !strings.Contains(errs, "2 of 2 messages failed") ||
		strings.Contains(errs, "quokkablimp") || strings.Contains(errs, agenttest.Key) {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

func TestChatRemote(t *testing.T) {
	llm := chatEnv(t)
	db := newDB(t)
	s := startServe(t, db, "--llm", "openai:gpt-test", "--llm-url", llm.URL)
	key := secretRE.FindString(s.stdout.String())
	t.Setenv(apiKeyEnv, key)
	mustCLI(t, db, "remember", "--tenant", "default", "--principal", "alice", "Alice is allergic to peanuts and carries an epinephrine pen.")
	mustCLI(t, db, "remember", "--tenant", "default", "--principal", "bob", "Bob is allergic to peanuts, zqxjvarnish.")
	llm.Script(func(agenttest.Request) string { return "Try rice crackers." }, nil)

	code, out, errs := remote(t, s.url, "I am allergic to peanuts, what snack can I eat?\n", "chat", "--principal", "alice", "--tenant", "default")
	if code != 0 || !strings.Contains(out, "Try rice crackers.\n  [1 injected") || !strings.Contains(out, "Alice is allergic") || strings.Contains(out, "Bob") {
		t.Fatalf("exit %d: %s\n%s", code, out, errs)
	}
	if sys := llm.Requests()[0].System(); strings.Contains(sys, "zqxjvarnish") || !strings.Contains(sys, "Alice is allergic") {
		t.Fatalf("prompt:\n%s", sys)
	}
	// Another tenant is refused, and ends the session at once.
	code, _, errs = remote(t, s.url, "one\ntwo\n", "chat", "--principal", "alice", "--tenant", "other")
	if code != 1 || strings.Count(errs, "forbidden") != 1 {
		t.Fatalf("other tenant: exit %d: %s", code, errs)
	}
	// The server's log holds no message text, reply, memory or key.
	logs := s.stderr.String()
	if !strings.Contains(logs, `"msg":"chat"`) {
		t.Fatalf("no chat log line:\n%s", logs)
	}
	for _, bad := range []string{"peanuts", "rice crackers", "snack", agenttest.Key} {
		if strings.Contains(logs, bad) {
			t.Fatalf("server log holds %q", bad)
		}
	}
}

func TestChatRemoteWithoutModel(t *testing.T) {
	chatEnv(t)
	db := newDB(t)
	s := startServe(t, db)
	t.Setenv(apiKeyEnv, secretRE.FindString(s.stdout.String()))
	code, _, errs := remote(t, s.url, "hello\nagain\n", "chat", "--principal", "alice")
	if code != 1 || strings.Count(errs, "chat needs a model") != 1 || !strings.Contains(errs, "start memgate serve with --llm") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}
