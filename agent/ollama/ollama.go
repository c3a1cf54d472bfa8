// Package ollama is a chat model client for an Ollama server's chat API,
// POST {URL}/api/chat, without streaming:
//
//	{"model":"llama3.2","messages":[{"role":"system","content":"…"},{"role":"user","content":"…"}],"stream":false}
//	→ {"model":"llama3.2","created_at":"…","message":{"role":"assistant","content":"…"},"done":true,"done_reason":"stop"}
//
// A request for JSON adds "format":"json". The reply is the message's
// content; an empty one is an error.
//
// It speaks HTTP with the standard library only. It must never include
// message text in an error, and never log (see agent/internal/httpchat and
// internal/httpmodel).
package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/agent"
	"github.com/memgate/memgate/agent/internal/httpchat"
	"github.com/memgate/memgate/internal/httpmodel"
)

// Provider names this package's replies.
const Provider = "ollama"

// Defaults for Config.
const (
	DefaultURL          = "http://localhost:11434"
	DefaultTimeout      = httpchat.DefaultTimeout
	DefaultMaxRetries   = httpchat.DefaultMaxRetries
	DefaultMaxRetryWait = httpchat.DefaultMaxRetryWait
)

// Config configures a Model. Model is required; the rest have defaults.
type Config struct {
	Model string
	// URL is the server's base URL (default DefaultURL); requests go to
	// URL + "/api/chat".
	URL string
	// Timeout bounds one HTTP attempt (default DefaultTimeout; the first
	// call may load the model).
	Timeout time.Duration
	// MaxRetries is how often a transport failure, 408, 429 or 5xx is
	// retried (default DefaultMaxRetries; negative: never).
	MaxRetries int
	// MaxRetryWait is the longest wait before a retry (default
	// DefaultMaxRetryWait); a longer Retry-After fails the call at once.
	MaxRetryWait time.Duration
	// HTTPClient makes the requests (default: a new http.Client).
	HTTPClient *http.Client
	// Sleep waits between retries (default: a timer honouring ctx).
	Sleep func(ctx context.Context, d time.Duration) error
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.URL == "" {
		c.URL = DefaultURL
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	if c.MaxRetryWait == 0 {
		c.MaxRetryWait = DefaultMaxRetryWait
	}
	return c
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	switch {
	case strings.TrimSpace(c.Model) == "":
		return memgate.FieldError("llm", "ollama needs a model, as in ollama:llama3.2")
	case c.Timeout < 0 || c.MaxRetryWait < 0:
		return memgate.FieldError("llm_timeout", "must not be negative")
	}
	_, err := httpchat.ParseURL(c.URL)
	return err
}

// Model calls an Ollama server's /api/chat. It is safe for concurrent use.
type Model struct {
	c *httpchat.Client
}

var _ agent.Model = (*Model)(nil)

// New returns a Model for cfg (defaults applied). It makes no request.
func New(cfg Config) (*Model, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base, _ := httpchat.ParseURL(cfg.URL)
	c := httpchat.New(httpchat.Config{
		Provider: Provider, Model: cfg.Model, Endpoint: base.JoinPath("api", "chat"),
		HTTPClient: cfg.HTTPClient, Timeout: cfg.Timeout, MaxRetries: cfg.MaxRetries,
		MaxRetryWait: cfg.MaxRetryWait, Sleep: cfg.Sleep,
	}, wire{model: cfg.Model})
	return &Model{c: c}, nil
}

// Chat sends the messages and returns the reply's content.
func (m *Model) Chat(ctx context.Context, req agent.ChatRequest) (*agent.ChatReply, error) {
	return m.c.Chat(ctx, req)
}

// wire is Ollama's /api/chat format.
type wire struct {
	httpmodel.OllamaErrors
	model string
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type request struct {
	Model    string    `json:"model"`
	Messages []message `json:"messages"`
	Stream   bool      `json:"stream"`
	Format   string    `json:"format,omitempty"`
}

type response struct {
	Model   string `json:"model"`
	Message *struct {
		Content *string `json:"content"`
	} `json:"message"`
	Done *bool `json:"done"`
}

func (w wire) Request(req agent.ChatRequest) any {
	r := request{Model: w.model, Messages: make([]message, len(req.Messages))}
	for i, m := range req.Messages {
		r.Messages[i] = message{Role: string(m.Role), Content: m.Content}
	}
	if req.JSON {
		r.Format = "json"
	}
	return r
}

func (wire) Response(body []byte) (string, string, error) {
	var r response
	if err := json.Unmarshal(body, &r); err != nil {
		return "", "", err
	}
	if r.Message == nil || r.Message.Content == nil {
		return "", "", errors.New("no message content")
	}
	if r.Done != nil && !*r.Done {
		return "", "", errors.New("answer not done")
	}
	return *r.Message.Content, r.Model, nil
}
