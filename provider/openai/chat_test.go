package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/agent"
	"github.com/memgate/memgate/provider/openai"
)

const (
	chatKey = "sk-test-zz9plural-alpha"
	// chatSecret is in every message sent: no error may carry it.
	chatSecret = "quokkablimp lives at 12 Acacia Avenue"
)

var chatReq = agent.ChatRequest{Messages: []agent.Message{
	{Role: agent.RoleSystem, Content: "You are helpful. " + chatSecret},
	{Role: agent.RoleUser, Content: "Where do I live? " + chatSecret},
}}

func okBody(content string) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test-0613",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}},
	})
	return string(b)
}

// chatServer answers with handle and counts the requests.
type chatServer struct {
	*httptest.Server
	mu    sync.Mutex
	n     int
	last  map[string]any
	auths []string
}

func newChatServer(t *testing.T, handle func(n int, w http.ResponseWriter, r *http.Request)) *chatServer {
	t.Helper()
	s := &chatServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		s.mu.Lock()
		s.n++
		n := s.n
		s.last = body
		s.auths = append(s.auths, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		s.mu.Unlock()
		handle(n, w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// seen returns the last body and the requests' method, path and
// Authorization header.
func (s *chatServer) seen() (map[string]any, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last, append([]string(nil), s.auths...)
}

func (s *chatServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func newModel(t *testing.T, url string, mod func(*openai.ChatConfig)) *openai.ChatModel {
	t.Helper()
	cfg := openai.ChatConfig{Model: "gpt-test", URL: url, APIKey: chatKey}
	if mod != nil {
		mod(&cfg)
	}
	m, err := openai.NewChatModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// clean fails the test when err's text carries message text or the key.
func clean(t *testing.T, err error) {
	t.Helper()
	for _, s := range []string{"quokkablimp", "Acacia", chatKey, "You are helpful"} {
		if strings.Contains(err.Error(), s) {
			t.Fatalf("error carries %q: %v", s, err)
		}
	}
}

func TestChatWireFormat(t *testing.T) {
	t.Parallel()
	s := newChatServer(t, func(_ int, w http.ResponseWriter, r *http.Request) { io.WriteString(w, okBody("You live in Lisbon.")) })
	m := newModel(t, s.URL, nil) // no /v1 in the URL: it is added
	rep, err := m.Chat(context.Background(), chatReq)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Content != "You live in Lisbon." || rep.Provider != "openai" || rep.Model != "gpt-test-0613" {
		t.Fatalf("reply %+v", rep)
	}
	last, auths := s.seen()
	if auths[0] != "POST /v1/chat/completions Bearer "+chatKey {
		t.Fatalf("request %q", auths[0])
	}
	msgs, _ := last["messages"].([]any)
	if last["model"] != "gpt-test" || len(msgs) != 2 || last["response_format"] != nil || last["stream"] != false {
		t.Fatalf("body %v", last)
	}
	if m0 := msgs[0].(map[string]any); m0["role"] != "system" || m0["content"] != chatReq.Messages[0].Content {
		t.Fatalf("first message %v", m0)
	}

	// JSON mode.
	js := chatReq
	js.JSON = true
	if _, err := m.Chat(context.Background(), js); err != nil {
		t.Fatal(err)
	}
	last, _ = s.seen()
	if rf, _ := last["response_format"].(map[string]any); rf["type"] != "json_object" {
		t.Fatalf("response_format %v", last["response_format"])
	}
}

// TestChatRetryAfterHonoured: a 429 with Retry-After waits exactly that long
// (through the injected sleep), then succeeds.
func TestChatRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	s := newChatServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
			return
		}
		io.WriteString(w, okBody("ok"))
	})
	var sl sleeper
	m := newModel(t, s.URL+"/v1", func(c *openai.ChatConfig) { c.HTTP.Sleep = sl.Sleep })
	if _, err := m.Chat(context.Background(), chatReq); err != nil {
		t.Fatal(err)
	}
	if s.count() != 2 || len(sl.got()) != 1 || sl.got()[0] != 7*time.Second {
		t.Fatalf("%d requests, waits %v; want 2 and [7s]", s.count(), sl.got())
	}
}

// TestChatServerErrorsRetriedThenUnavailable: 5xx are retried MaxRetries
// times with backoff, then the call fails as unavailable.
func TestChatServerErrorsRetriedThenUnavailable(t *testing.T) {
	t.Parallel()
	s := newChatServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, `{"error":{"message":"upstream failed"}}`)
	})
	var sl sleeper
	m := newModel(t, s.URL, func(c *openai.ChatConfig) { c.HTTP.Sleep = sl.Sleep; c.HTTP.MaxRetries = 2 })
	_, err := m.Chat(context.Background(), chatReq)
	if memgate.ErrorCode(err) != memgate.EUNAVAILABLE || !strings.Contains(err.Error(), "after 3 attempts") || !strings.Contains(err.Error(), "502") {
		t.Fatalf("err %v", err)
	}
	if s.count() != 3 || len(sl.got()) != 2 || sl.got()[0] <= 0 || sl.got()[1] <= 0 {
		t.Fatalf("%d requests, waits %v", s.count(), sl.got())
	}
	clean(t, err)
}

// TestChatRetryAfterTooLong: a server asking for a longer wait than
// MaxRetryWait fails the call at once.
func TestChatRetryAfterTooLong(t *testing.T) {
	t.Parallel()
	s := newChatServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	var sl sleeper
	m := newModel(t, s.URL, func(c *openai.ChatConfig) { c.HTTP.Sleep = sl.Sleep })
	_, err := m.Chat(context.Background(), chatReq)
	if memgate.ErrorCode(err) != memgate.EUNAVAILABLE || !strings.Contains(err.Error(), "retry after 1h0m0s") || s.count() != 1 || len(sl.got()) != 0 {
		t.Fatalf("err %v after %d requests and waits %v", err, s.count(), sl.got())
	}
}

// TestChatTimeout: an attempt that does not answer within Timeout fails as
// unavailable, naming the timeout.
func TestChatTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	s := newChatServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	m := newModel(t, s.URL, func(c *openai.ChatConfig) { c.HTTP.Timeout = 50 * time.Millisecond; c.HTTP.MaxRetries = -1 })
	_, err := m.Chat(context.Background(), chatReq)
	if memgate.ErrorCode(err) != memgate.EUNAVAILABLE || !strings.Contains(err.Error(), "did not answer within 50ms") {
		t.Fatalf("err %v", err)
	}
	clean(t, err)
}

// TestChatMalformedResponse: a 2xx answer that is not a chat completion with
// content fails as unavailable, without quoting the body.
func TestChatMalformedResponse(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"not json":     `<html>quokkablimp</html>`,
		"no choices":   `{"choices":[]}`,
		"null content": `{"choices":[{"message":{"role":"assistant","content":null,"refusal":"quokkablimp"}}]}`,
		"no message":   `{"choices":[{"index":0}]}`,
		"wrong type":   `{"choices":[{"message":{"content":["quokkablimp"]}}]}`,
		"empty reply":  okBody("  "),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newChatServer(t, func(_ int, w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
			m := newModel(t, s.URL, nil)
			_, err := m.Chat(context.Background(), chatReq)
			if memgate.ErrorCode(err) != memgate.EUNAVAILABLE || s.count() != 1 {
				t.Fatalf("err %v after %d requests", err, s.count())
			}
			clean(t, err)
		})
	}
}

// TestChatCancelledContext: a cancelled context ends the call at once, with
// context.Canceled in the chain, during a request or a retry wait.
func TestChatCancelledContext(t *testing.T) {
	t.Parallel()
	t.Run("before", func(t *testing.T) {
		s := newChatServer(t, func(_ int, w http.ResponseWriter, r *http.Request) { io.WriteString(w, okBody("x")) })
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := newModel(t, s.URL, nil).Chat(ctx, chatReq)
		if !errors.Is(err, context.Canceled) || memgate.ErrorCode(err) != memgate.EUNAVAILABLE || s.count() != 0 {
			t.Fatalf("err %v after %d requests", err, s.count())
		}
	})
	t.Run("during", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		s := newChatServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
			cancel()
			<-r.Context().Done()
		})
		_, err := newModel(t, s.URL, nil).Chat(ctx, chatReq)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
		clean(t, err)
	})
	t.Run("waiting to retry", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		s := newChatServer(t, func(_ int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
		m := newModel(t, s.URL, func(c *openai.ChatConfig) {
			c.HTTP.Sleep = func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }
		})
		_, err := m.Chat(ctx, chatReq)
		if !errors.Is(err, context.Canceled) || s.count() != 1 {
			t.Fatalf("err %v after %d requests", err, s.count())
		}
	})
}

// TestChatErrorsNeverCarryTextOrKey: a server that echoes the request (and the
// key) in its error message is not quoted; the status and code are.
func TestChatErrorsNeverCarryTextOrKey(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		status int
		body   string
		code   string
		want   string
	}{
		"echoes the prompt": {http.StatusBadRequest, `{"error":{"message":"Invalid content: 'Where do I live? quokkablimp lives at 12 Acacia Avenue' is too long","type":"invalid_request_error"}}`, memgate.EINVALID, "withheld"},
		"echoes the key":    {http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided: ` + chatKey + `","code":"invalid_api_key"}}`, memgate.EINVALID, "check the API key"},
		"unknown model":     {http.StatusNotFound, `{"error":{"message":"The model gpt-test does not exist","code":"model_not_found"}}`, memgate.EINVALID, "does not know the model"},
		"string error":      {http.StatusBadRequest, `{"error":"bad request"}`, memgate.EINVALID, "bad request"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newChatServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			_, err := newModel(t, s.URL, nil).Chat(context.Background(), chatReq)
			if memgate.ErrorCode(err) != tc.code || !strings.Contains(err.Error(), tc.want) || s.count() != 1 {
				t.Fatalf("err %v after %d requests", err, s.count())
			}
			clean(t, err)
		})
	}
}

func TestChatConfig(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]openai.ChatConfig{
		"no model":        {URL: "http://x"},
		"bad url":         {Model: "m", URL: "ftp://x"},
		"url credentials": {Model: "m", URL: "http://u:p@x"},
		"url query":       {Model: "m", URL: "http://x?k=v"},
		"key newline":     {Model: "m", APIKey: "a\nb"},
	} {
		if _, err := openai.NewChatModel(cfg); memgate.ErrorCode(err) != memgate.EINVALID {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := openai.NewChatModel(openai.ChatConfig{Model: "m"}); err != nil {
		t.Fatalf("control: %v", err)
	}
}
