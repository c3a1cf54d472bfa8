// Package httpmodel is what memgate's HTTP clients of model servers share,
// the embedders (embedder/internal/httpembed) and the chat models
// (agent/internal/httpchat): one JSON POST with a timeout per attempt,
// bounded retries with backoff on transport failures, 408, 429 and 5xx
// (honouring Retry-After up to a maximum wait), a bounded response body, a
// failed answer classified into a memgate error code, and a server's
// message quoted only once redacted. It also checks a base URL and reads
// the error answers of the two wire families memgate speaks, OpenAI's and
// Ollama's.
//
// It must never put request text or the API key in an error, and never
// log: a server's message is quoted only when it quotes no part of what
// was sent (see Redact), and the key is replaced in it. What an error says
// about the client (its name, provider and model) is the caller's, through
// Config.Fail.
package httpmodel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/memgate/memgate"
)

// DefaultMaxRetryWait is the longest wait before a retry, whether from
// backoff or from Retry-After: a server asking for a longer wait fails the
// call at once rather than hold it for minutes.
const DefaultMaxRetryWait = 20 * time.Second

const baseBackoff = 500 * time.Millisecond

// Config configures a Client. The embedder and chat packages fill it from
// their own configuration and defaults.
type Config struct {
	// Endpoint is the URL every request is POSTed to.
	Endpoint *url.URL
	// APIKey, when set, is sent as "Authorization: Bearer APIKey" and
	// replaced in any server message quoted in an error.
	APIKey     string
	HTTPClient *http.Client // default: a new http.Client
	// Timeout bounds one attempt (connect, request, response); it must be
	// positive.
	Timeout    time.Duration
	MaxRetries int // negative: no retry
	// MaxRetryWait is the longest wait before a retry (default
	// DefaultMaxRetryWait).
	MaxRetryWait time.Duration
	// MaxResponseBytes bounds a response body; it must be positive.
	MaxResponseBytes int64
	// Sleep waits d or until ctx is done (default: a timer); tests inject
	// one that records the waits instead of taking them.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock Retry-After dates are read against (default
	// time.Now).
	Now func() time.Time

	// Field is the field of an error that blames the configuration (an
	// unknown model, no endpoint at the URL, refused credentials):
	// "embedder", "llm".
	Field string
	// Service names the endpoint a 404 says is missing: "embeddings",
	// "chat".
	Service string
	// Sent names what a withheld server message quoted: "input",
	// "request".
	Sent string
	// Fail returns the error a caller is shown: code and field, and a
	// message that names the client and goes on with what (such as "is
	// unreachable"). cause, when set, belongs in the error chain but not
	// in the message (see Error).
	Fail func(code, field, what string, cause error) error
	// Cancelled returns the error of a call whose context ended first;
	// err is the context's error and must stay in the chain.
	Cancelled func(err error) error
}

// ErrorWire reads one wire format's error answers.
type ErrorWire interface {
	// ErrorMessage extracts the server's message and machine code (either
	// may be empty) from an error body.
	ErrorMessage(body []byte) (msg, code string)
	// UnknownModel reports whether an error answer means the configured
	// model does not exist on the server.
	UnknownModel(status int, msg, code string) bool
}

// Client posts to one endpoint. It is safe for concurrent use.
type Client struct {
	cfg    Config
	wire   ErrorWire
	header http.Header
}

// New returns a Client for cfg (defaults applied) that reads error answers
// with w.
func New(cfg Config, w ErrorWire) *Client {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.MaxRetryWait <= 0 {
		cfg.MaxRetryWait = DefaultMaxRetryWait
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := http.Header{"User-Agent": {"memgate"}}
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	return &Client{cfg: cfg, wire: w, header: h}
}

// Post sends body, retrying what may succeed later, and returns the body of
// a 2xx answer. texts are what body carries of the caller's data: a server
// message that quotes any of it is withheld from the error. When ctx ends
// first, the error is Config.Cancelled's.
func (c *Client) Post(ctx context.Context, body []byte, texts []string) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		status, resp, hdr, err := c.once(ctx, body)
		if cerr := ctx.Err(); cerr != nil {
			return nil, c.cfg.Cancelled(cerr)
		}
		if err == nil && status/100 == 2 {
			return resp, nil
		}
		final := c.classify(status, resp, err, texts)
		retry := err != nil || status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500
		if !retry || attempt >= c.cfg.MaxRetries {
			if retry && attempt > 0 {
				return nil, fmt.Errorf("after %d attempts: %w", attempt+1, final)
			}
			return nil, final
		}
		wait := backoff(attempt)
		if ra, ok := retryAfter(hdr, c.cfg.Now()); ok {
			if ra > c.cfg.MaxRetryWait {
				return nil, c.cfg.Fail(memgate.EUNAVAILABLE, "", fmt.Sprintf("is rate limited: the server asks to retry after %s", ra.Round(time.Second)), nil)
			}
			wait = ra
		}
		if err := c.cfg.Sleep(ctx, min(wait, c.cfg.MaxRetryWait)); err != nil {
			return nil, c.cfg.Cancelled(err)
		}
	}
}

// once makes one attempt. A transport error (refused, reset, timed out) is
// returned as err; an answer as its status, body and header.
func (c *Client) once(ctx context.Context, body []byte) (int, []byte, http.Header, error) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.cfg.Endpoint.String(), bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header = c.header.Clone()
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxResponseBytes+1))
	if err != nil {
		return 0, nil, nil, err
	}
	if int64(len(b)) > c.cfg.MaxResponseBytes {
		return 0, nil, nil, fmt.Errorf("response larger than %d bytes", c.cfg.MaxResponseBytes)
	}
	return resp.StatusCode, b, resp.Header, nil
}

// classify turns a failed attempt into the error the caller gets if it is
// the last one.
func (c *Client) classify(status int, body []byte, err error, texts []string) error {
	fail := c.cfg.Fail
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && ue.Timeout() || errors.Is(err, context.DeadlineExceeded) {
			return fail(memgate.EUNAVAILABLE, "", fmt.Sprintf("did not answer within %s", c.cfg.Timeout), nil)
		}
		return fail(memgate.EUNAVAILABLE, "", "is unreachable", err)
	}
	msg, code := c.wire.ErrorMessage(body)
	var secrets []string
	if c.cfg.APIKey != "" {
		secrets = []string{c.cfg.APIKey}
	}
	quoted := Redact(msg, texts, secrets, c.cfg.Sent)
	detail := fmt.Sprintf("answered %d %s", status, http.StatusText(status))
	if code != "" && isCode(code) {
		detail += " (" + code + ")"
	}
	if quoted != "" {
		detail += ": " + quoted
	}
	switch {
	case c.wire.UnknownModel(status, msg, code):
		return fail(memgate.EINVALID, c.cfg.Field, fmt.Sprintf("does not know the model (%s); check the configured model name", detail), nil)
	case status == http.StatusNotFound:
		return fail(memgate.EINVALID, c.cfg.Field, fmt.Sprintf("has no %s endpoint at the configured URL (%s); check the URL", c.cfg.Service, detail), nil)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fail(memgate.EINVALID, c.cfg.Field, fmt.Sprintf("refused the credentials (%s); check the API key", detail), nil)
	case status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500:
		return fail(memgate.EUNAVAILABLE, "", detail, nil)
	default:
		return fail(memgate.EINVALID, "", "refused the request: "+detail, nil)
	}
}

// Error returns a *memgate.Error with code, field and msg; cause, when set,
// follows it in the error chain (for the operator) but not in the message
// a caller is shown. A cause never carries request text: it is a transport,
// context or decoding error.
func Error(code, field, msg string, cause error) error {
	me := &memgate.Error{Code: code, Field: field, Message: msg}
	if cause != nil {
		return fmt.Errorf("%w: %w", me, cause)
	}
	return me
}

// isCode reports whether s looks like a machine code (invalid_request_error,
// model_not_found), so it can be shown as one.
func isCode(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// backoff is the wait before retry attempt+1: 0.5 s doubling, each drawn
// between half and all of it so that clients do not retry in step.
func backoff(attempt int) time.Duration {
	d := baseBackoff << min(attempt, 6)
	return d/2 + rand.N(d/2+1)
}

// retryAfter reads a Retry-After header: delay seconds or an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		if n > int64(time.Duration(math.MaxInt64)/time.Second) {
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ParseURL checks a base URL: http or https with a host, no query or
// fragment, trailing slashes removed. Credentials in it are refused: keys
// go in their own setting, where they are kept out of errors. Errors name
// field and give example as a good URL.
func ParseURL(field, example, raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, memgate.FieldError(field, "must be an http or https URL such as %s", example)
	}
	if u.User != nil {
		return nil, memgate.FieldError(field, "must not carry credentials; give the API key separately")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, memgate.FieldError(field, "must not have a query or fragment")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}
