package ollama_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/agent"
	"github.com/memgate/memgate/provider"
	"github.com/memgate/memgate/provider/ollama"
)

var chatReq = agent.ChatRequest{Messages: []agent.Message{
	{Role: agent.RoleSystem, Content: "You are helpful."},
	{Role: agent.RoleUser, Content: "Where does quokkablimp live?"},
}}

// fake is an httptest server speaking Ollama's /api/chat.
type fake struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
	handle func(n int, w http.ResponseWriter)
}

func newFake(t *testing.T, handle func(n int, w http.ResponseWriter)) *fake {
	t.Helper()
	f := &fake{handle: handle}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/chat" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		n := len(f.bodies)
		f.mu.Unlock()
		f.handle(n, w)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fake) seen() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.bodies...)
}

func reply(w http.ResponseWriter, content string) {
	json.NewEncoder(w).Encode(map[string]any{
		"model":       "llama3.2:latest",
		"created_at":  "2026-01-02T15:04:05Z",
		"message":     map[string]any{"role": "assistant", "content": content},
		"done":        true,
		"done_reason": "stop",
		"eval_count":  3,
	})
}

func TestChatWireFormat(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(_ int, w http.ResponseWriter) { reply(w, `{"memories":[]}`) })
	m, err := ollama.NewChatModel(ollama.ChatConfig{Model: "llama3.2", URL: f.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := m.Chat(context.Background(), chatReq)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Content != `{"memories":[]}` || rep.Provider != "ollama" || rep.Model != "llama3.2:latest" {
		t.Fatalf("reply %+v", rep)
	}
	js := chatReq
	js.JSON = true
	if _, err := m.Chat(context.Background(), js); err != nil {
		t.Fatal(err)
	}
	bodies := f.seen()
	msgs, _ := bodies[0]["messages"].([]any)
	if bodies[0]["model"] != "llama3.2" || bodies[0]["stream"] != false || bodies[0]["format"] != nil || len(msgs) != 2 {
		t.Fatalf("chat body %v", bodies[0])
	}
	if m1 := msgs[1].(map[string]any); m1["role"] != "user" || m1["content"] != chatReq.Messages[1].Content {
		t.Fatalf("user message %v", m1)
	}
	if bodies[1]["format"] != "json" {
		t.Fatalf("json body %v", bodies[1])
	}
}

func TestChatErrors(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		handle   func(n int, w http.ResponseWriter)
		code     string
		want     string
		requests int
	}{
		"model not pulled": {func(_ int, w http.ResponseWriter) {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":"model \"llama3.2\" not found, try pulling it first"}`)
		}, memgate.EINVALID, "does not know the model", 1},
		"overloaded then ok": {func(n int, w http.ResponseWriter) {
			if n == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				io.WriteString(w, `{"error":"server busy, please try again. maximum pending requests exceeded"}`)
				return
			}
			reply(w, "fine")
		}, "", "", 2},
		"always failing": {func(_ int, w http.ResponseWriter) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":"failed on quokkablimp"}`)
		}, memgate.EUNAVAILABLE, "withheld", 3},
		"not done": {func(_ int, w http.ResponseWriter) {
			io.WriteString(w, `{"model":"llama3.2","message":{"role":"assistant","content":"quokkablimp"},"done":false}`)
		}, memgate.EUNAVAILABLE, "malformed", 1},
		"empty": {func(_ int, w http.ResponseWriter) { reply(w, "") }, memgate.EUNAVAILABLE, "empty reply", 1},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tc.handle)
			m, err := ollama.NewChatModel(ollama.ChatConfig{Model: "llama3.2", URL: f.URL, HTTP: provider.HTTP{Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Chat(context.Background(), chatReq)
			if memgate.ErrorCode(err) != tc.code || (tc.want != "" && !strings.Contains(err.Error(), tc.want)) || len(f.seen()) != tc.requests {
				t.Fatalf("err %v after %d requests", err, len(f.seen()))
			}
			if err != nil && strings.Contains(err.Error(), "quokkablimp") {
				t.Fatalf("error carries message text: %v", err)
			}
		})
	}
}
