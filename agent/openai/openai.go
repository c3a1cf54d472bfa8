// Package openai is a chat model client for the OpenAI chat completions
// API, POST {URL}/chat/completions, as OpenAI itself and the
// OpenAI-compatible servers speak it (vLLM, llama.cpp server, LM Studio,
// LocalAI, Ollama's /v1, hosted gateways):
//
//	{"model":"gpt-4o-mini","messages":[{"role":"system","content":"…"},{"role":"user","content":"…"}]}
//	→ {"id":"…","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"…"},"finish_reason":"stop"}]}
//
// A request for JSON adds "response_format":{"type":"json_object"}. The
// reply is the first choice's message content; a choice without content
// (a refusal, a tool call) is an error, as is an empty one. Answers are not
// streamed. The API key, when set, is sent as a bearer token and never
// appears in an error.
//
// It speaks HTTP with the standard library only. It must never include
// message text or the key in an error, and never log (see
// agent/internal/httpchat and internal/httpmodel).
package openai

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
const Provider = "openai"

// Defaults for Config.
const (
	DefaultURL          = "https://api.openai.com/v1"
	DefaultTimeout      = httpchat.DefaultTimeout
	DefaultMaxRetries   = httpchat.DefaultMaxRetries
	DefaultMaxRetryWait = httpchat.DefaultMaxRetryWait
)

// Config configures a Model. Model is required; the rest have defaults.
type Config struct {
	Model string
	// URL is the API's base URL, /v1 included (default DefaultURL);
	// requests go to URL + "/chat/completions". A URL without a path gets
	// /v1, so http://localhost:8000 means http://localhost:8000/v1.
	URL string
	// APIKey, when set, is sent as "Authorization: Bearer APIKey".
	APIKey string
	// Timeout bounds one HTTP attempt (default DefaultTimeout).
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
		return memgate.FieldError("llm", "openai needs a model, as in openai:gpt-4o-mini")
	case c.Timeout < 0 || c.MaxRetryWait < 0:
		return memgate.FieldError("llm_timeout", "must not be negative")
	case strings.ContainsAny(c.APIKey, "\r\n"):
		return memgate.FieldError("api_key", "must be one line")
	}
	_, err := httpchat.ParseURL(c.URL)
	return err
}

// Model calls an OpenAI-compatible chat completions API. It is safe for
// concurrent use.
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
		Provider: Provider, Model: cfg.Model, Endpoint: httpmodel.OpenAIEndpoint(base, "chat", "completions"),
		APIKey: cfg.APIKey, HTTPClient: cfg.HTTPClient, Timeout: cfg.Timeout, MaxRetries: cfg.MaxRetries,
		MaxRetryWait: cfg.MaxRetryWait, Sleep: cfg.Sleep,
	}, wire{model: cfg.Model})
	return &Model{c: c}, nil
}

// Chat sends the messages and returns the first choice's content.
func (m *Model) Chat(ctx context.Context, req agent.ChatRequest) (*agent.ChatReply, error) {
	return m.c.Chat(ctx, req)
}

// wire is the OpenAI /v1/chat/completions format.
type wire struct {
	httpmodel.OpenAIErrors
	model string
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type responseFormat struct {
	Type string `json:"type"`
}

type request struct {
	Model          string          `json:"model"`
	Messages       []message       `json:"messages"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
	Stream         bool            `json:"stream"`
}

type response struct {
	Model   string `json:"model"`
	Choices []struct {
		Message *struct {
			Content *string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
}

func (w wire) Request(req agent.ChatRequest) any {
	r := request{Model: w.model, Messages: make([]message, len(req.Messages))}
	for i, m := range req.Messages {
		r.Messages[i] = message{Role: string(m.Role), Content: m.Content}
	}
	if req.JSON {
		r.ResponseFormat = &responseFormat{Type: "json_object"}
	}
	return r
}

func (wire) Response(body []byte) (string, string, error) {
	var r response
	if err := json.Unmarshal(body, &r); err != nil {
		return "", "", err
	}
	if len(r.Choices) == 0 || r.Choices[0].Message == nil || r.Choices[0].Message.Content == nil {
		return "", "", errors.New("no choice with content")
	}
	return *r.Choices[0].Message.Content, r.Model, nil
}
