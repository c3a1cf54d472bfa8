// Package httpchat is what memgate's chat model clients (agent/openai,
// agent/ollama) share: one JSON POST per call through internal/httpmodel
// (a timeout per attempt, bounded retries with backoff on transport
// failures, 408, 429 and 5xx honouring Retry-After, a bounded response
// body, errors mapped to memgate codes), an empty answer refused.
//
// It must never put message text or the API key in an error, and never
// log: an error message names the provider, the configured model, the
// status and what went wrong; a message from the server is quoted only
// when it quotes no part of the messages sent (see httpmodel.Redact).
package httpchat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/agent"
	"github.com/memgate/memgate/internal/httpmodel"
)

// Defaults shared by the chat clients.
const (
	// DefaultTimeout bounds one HTTP attempt: a chat answer takes longer
	// than an embedding, a local model on a CPU much longer.
	DefaultTimeout = 120 * time.Second
	// DefaultMaxRetries is how many times a failed attempt is retried.
	DefaultMaxRetries = 2
	// DefaultMaxRetryWait is the longest wait before a retry (see
	// httpmodel.DefaultMaxRetryWait).
	DefaultMaxRetryWait = httpmodel.DefaultMaxRetryWait
	// MaxResponseBytes bounds a response body.
	MaxResponseBytes = 8 << 20
)

// Config configures a Client. The provider packages fill it from their
// own documented Config.
type Config struct {
	Provider string   // "openai", "ollama": in messages and in ChatReply
	Model    string   // the configured model: sent, and named in messages
	Endpoint *url.URL // the URL every request is POSTed to
	// APIKey, when set, is sent as a bearer token and kept out of errors.
	APIKey     string
	HTTPClient *http.Client
	Timeout    time.Duration
	MaxRetries int // negative: no retry
	// MaxRetryWait is the longest wait before a retry.
	MaxRetryWait time.Duration
	// Sleep waits d or until ctx is done (default: a timer); tests inject
	// one that records the waits instead of taking them.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock Retry-After dates are read against.
	Now func() time.Time
}

// Wire is one provider's request and response format.
type Wire interface {
	// Request returns the JSON body of req.
	Request(req agent.ChatRequest) any
	// Response decodes a 2xx body into the reply text and the model the
	// server reports ("" when it does not).
	Response(body []byte) (content, model string, err error)
	// The provider's error answers (httpmodel.OpenAIErrors,
	// httpmodel.OllamaErrors).
	httpmodel.ErrorWire
}

// Client calls one chat endpoint. It is safe for concurrent use.
type Client struct {
	cfg  Config
	wire Wire
	http *httpmodel.Client
}

// New returns a Client; cfg must be complete (the provider packages apply
// their defaults first).
func New(cfg Config, w Wire) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	c := &Client{cfg: cfg, wire: w}
	c.http = httpmodel.New(httpmodel.Config{
		Endpoint: cfg.Endpoint, APIKey: cfg.APIKey, HTTPClient: cfg.HTTPClient,
		Timeout: cfg.Timeout, MaxRetries: cfg.MaxRetries, MaxRetryWait: cfg.MaxRetryWait,
		MaxResponseBytes: MaxResponseBytes, Sleep: cfg.Sleep, Now: cfg.Now,
		Field: "llm", Service: "chat", Sent: "request",
		Fail: c.fail, Cancelled: c.cancelled,
	}, w)
	return c
}

// Chat sends req and returns the model's answer.
func (c *Client) Chat(ctx context.Context, req agent.ChatRequest) (*agent.ChatReply, error) {
	if err := ctx.Err(); err != nil {
		return nil, c.cancelled(err)
	}
	if len(req.Messages) == 0 {
		return nil, memgate.FieldError("messages", "must not be empty")
	}
	body, err := json.Marshal(c.wire.Request(req))
	if err != nil {
		return nil, fmt.Errorf("%s: encode request: %w", c.cfg.Provider, err)
	}
	texts := make([]string, len(req.Messages))
	for i, m := range req.Messages {
		texts[i] = m.Content
	}
	resp, err := c.http.Post(ctx, body, texts)
	if err != nil {
		return nil, err
	}
	content, model, err := c.wire.Response(resp)
	if err != nil {
		// The decoder's error may quote the body: it stays out of the
		// message and out of the chain.
		return nil, c.fail(memgate.EUNAVAILABLE, "", "answered with a malformed response", nil)
	}
	if strings.TrimSpace(content) == "" {
		return nil, c.fail(memgate.EUNAVAILABLE, "", "answered with an empty reply", nil)
	}
	if model == "" {
		model = c.cfg.Model
	}
	return &agent.ChatReply{Content: content, Provider: c.cfg.Provider, Model: model}, nil
}

// cancelled is the error of a call whose context ended: unavailable, and
// errors.Is(err, context.Canceled or DeadlineExceeded) still holds.
func (c *Client) cancelled(err error) error {
	what := "call was cancelled"
	if errors.Is(err, context.DeadlineExceeded) {
		what = "call ran out of time"
	}
	return c.fail(memgate.EUNAVAILABLE, "", what, err)
}

// fail returns an error with code and field whose message names the
// provider and model; cause, when set, follows it in the error chain (for
// the operator) but not in the message a caller is shown. A cause never
// carries message text: it is a transport or context error.
func (c *Client) fail(code, field, what string, cause error) error {
	return httpmodel.Error(code, field, fmt.Sprintf("llm %s (model %q) %s", c.cfg.Provider, c.cfg.Model, what), cause)
}

// ParseURL checks a chat model's base URL (see httpmodel.ParseURL).
func ParseURL(raw string) (*url.URL, error) {
	return httpmodel.ParseURL("llm_url", "http://127.0.0.1:11434", raw)
}
