// Package agenttest is a fake chat model for tests: an httptest server
// that speaks the OpenAI chat completions wire format with scripted
// replies and records every request it receives, so a test can assert on
// the prompt exactly as a model would get it. It is used by the tests of
// package agent, of the HTTP API and of the CLI; it is never used outside
// tests and never reaches a network beyond loopback.
package agenttest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/memgate/memgate/agent"
	"github.com/memgate/memgate/provider"
	"github.com/memgate/memgate/provider/openai"
)

// Key is the API key the server expects as a bearer token; any other is
// answered 401. Tests assert it never appears in an error or a log.
const Key = "sk-test-zz9plural-alpha"

// ModelSuffix is appended to the requested model in the answer's "model",
// as OpenAI reports a dated snapshot of the model asked for.
const ModelSuffix = "-2024"

// Message is one message of a request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is a chat completions request as the server decoded it.
type Request struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	// JSON is set when the request asked for response_format json_object.
	JSON bool `json:"-"`
}

// System is the request's system message ("" without one).
func (r Request) System() string {
	for _, m := range r.Messages {
		if m.Role == "system" {
			return m.Content
		}
	}
	return ""
}

// Last is the request's last message.
func (r Request) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// Server is the fake model. Its replies are scripted with Script: reply
// answers a chat call, extract a JSON (extraction) call. By default it
// replies "Noted." and proposes no memory.
type Server struct {
	URL string // base URL: pass it as the OpenAI URL (requests go to /v1/chat/completions)

	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []Request
	reply   func(Request) string
	extract func(Request) string
}

// NewServer starts a fake model, closed when the test ends.
func NewServer(t testing.TB) *Server {
	s := &Server{
		reply:   func(Request) string { return "Noted." },
		extract: func(Request) string { return `{"memories":[]}` },
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":{"message":"Unknown request URL","type":"invalid_request_error"}}`)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+Key {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
		return
	}
	var body struct {
		Request
		ResponseFormat *struct {
			Type string `json:"type"`
		} `json:"response_format"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"We could not parse the JSON body of your request.","type":"invalid_request_error"}}`)
		return
	}
	req := body.Request
	req.JSON = body.ResponseFormat != nil && body.ResponseFormat.Type == "json_object"
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	answer := s.reply
	if req.JSON {
		answer = s.extract
	}
	s.mu.Unlock()
	content := answer(req)
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": req.Model + ModelSuffix,
		"choices": []any{map[string]any{
			"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop",
		}},
		"usage": map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
	})
}

// Script sets the replies; a nil function leaves that one as it is. The
// functions run on the server's goroutines.
func (s *Server) Script(reply, extract func(Request) string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if reply != nil {
		s.reply = reply
	}
	if extract != nil {
		s.extract = extract
	}
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Model returns an OpenAI client of the server for model "gpt-test",
// with the right key and no retries.
func (s *Server) Model(t testing.TB) agent.Model {
	m, err := openai.NewChatModel(openai.ChatConfig{Model: "gpt-test", URL: s.URL, APIKey: Key, HTTP: provider.HTTP{MaxRetries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
