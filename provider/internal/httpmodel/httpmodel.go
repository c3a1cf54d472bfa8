// Package httpmodel is the one HTTP client of model servers that the
// provider packages (provider/ollama, provider/openai) share: one JSON
// POST with a timeout per attempt, bounded retries with backoff on
// transport failures, 408, 429 and 5xx (honouring Retry-After up to a
// maximum wait), a bounded response body, a failed answer classified into
// a memgate error code, and a server's message quoted only once redacted.
// On top of it are an embedding client (EmbedClient: batches, checked
// vectors, provenance) and a chat client (ChatClient: an empty answer
// refused), each driven by one provider's wire format. It also checks a
// base URL and reads the error answers of the two wire families memgate
// speaks, OpenAI's and Ollama's.
//
// It must never put request text or the API key in an error, and never
// log: a server's message is quoted only when it quotes no part of what
// was sent (see Redact), and the key is replaced in it. An error message
// names the client's use, provider and configured model, the status and
// what went wrong; never a URL.
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
	"github.com/memgate/memgate/provider"
)

const baseBackoff = 500 * time.Millisecond

// Target is the server and model a client calls. The provider packages
// fill it from their own documented configuration, defaults applied.
type Target struct {
	Provider string   // in messages and provenance: "ollama", "openai"
	Model    string   // the configured model: sent, and named in messages
	Endpoint *url.URL // the URL every request is POSTed to
	// APIKey, when set, is sent as "Authorization: Bearer APIKey" and
	// replaced in any server message quoted in an error.
	APIKey string
	HTTP   provider.HTTP
}

// use is what a client's requests are for: it names the client in errors.
type use struct {
	// field is the field of an error that blames the configuration (an
	// unknown model, no endpoint at the URL, refused credentials).
	field string
	// service names the endpoint a 404 says is missing.
	service string
	// sent names what a withheld server message quoted.
	sent string
	// timeout bounds an attempt when the Target sets no timeout.
	timeout time.Duration
	// maxResponse bounds a response body.
	maxResponse int64
}

var (
	embedding = use{field: "embedder", service: "embeddings", sent: "input", timeout: provider.DefaultEmbedderTimeout, maxResponse: 64 << 20}
	chatting  = use{field: "llm", service: "chat", sent: "request", timeout: provider.DefaultChatTimeout, maxResponse: 8 << 20}
)

// client posts to one endpoint. It is safe for concurrent use.
type client struct {
	t      Target
	use    use
	wire   ErrorWire
	header http.Header
	// fail returns the error a caller is shown: code and field, and a
	// message that names the client and goes on with what (such as "is
	// unreachable"). cause, when set, belongs in the error chain but not
	// in the message (see newError).
	fail func(code, field, what string, cause error) error
	// cancelled returns the error of a call whose context ended first;
	// err is the context's error and must stay in the chain.
	cancelled func(err error) error
}

// newClient returns a client for t that reads error answers with w. A
// Timeout or MaxRetryWait that is not positive, and a nil HTTPClient or
// Sleep, get their defaults; MaxRetries is taken as it is (0: no retry).
func newClient(t Target, u use, w ErrorWire, fail func(code, field, what string, cause error) error, cancelled func(error) error) *client {
	if t.HTTP.Timeout <= 0 {
		t.HTTP.Timeout = u.timeout
	}
	if t.HTTP.MaxRetryWait <= 0 {
		t.HTTP.MaxRetryWait = provider.DefaultMaxRetryWait
	}
	if t.HTTP.HTTPClient == nil {
		t.HTTP.HTTPClient = &http.Client{}
	}
	if t.HTTP.Sleep == nil {
		t.HTTP.Sleep = sleep
	}
	h := http.Header{"User-Agent": {"memgate"}}
	if t.APIKey != "" {
		h.Set("Authorization", "Bearer "+t.APIKey)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	return &client{t: t, use: u, wire: w, header: h, fail: fail, cancelled: cancelled}
}

// post sends body, retrying what may succeed later, and returns the body of
// a 2xx answer. texts are what body carries of the caller's data: a server
// message that quotes any of it is withheld from the error. When ctx ends
// first, the error is cancelled's.
func (c *client) post(ctx context.Context, body []byte, texts []string) ([]byte, error) {
	h := c.t.HTTP
	for attempt := 0; ; attempt++ {
		status, resp, hdr, err := c.once(ctx, body)
		if cerr := ctx.Err(); cerr != nil {
			return nil, c.cancelled(cerr)
		}
		if err == nil && status/100 == 2 {
			return resp, nil
		}
		final := c.classify(status, resp, err, texts)
		retry := err != nil || status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500
		if !retry || attempt >= h.MaxRetries {
			if retry && attempt > 0 {
				return nil, fmt.Errorf("after %d attempts: %w", attempt+1, final)
			}
			return nil, final
		}
		wait := backoff(attempt)
		if ra, ok := retryAfter(hdr, time.Now()); ok {
			if ra > h.MaxRetryWait {
				return nil, c.fail(memgate.EUNAVAILABLE, "", fmt.Sprintf("is rate limited: the server asks to retry after %s", ra.Round(time.Second)), nil)
			}
			wait = ra
		}
		if err := h.Sleep(ctx, min(wait, h.MaxRetryWait)); err != nil {
			return nil, c.cancelled(err)
		}
	}
}

// once makes one attempt. A transport error (refused, reset, timed out) is
// returned as err; an answer as its status, body and header.
func (c *client) once(ctx context.Context, body []byte) (int, []byte, http.Header, error) {
	actx, cancel := context.WithTimeout(ctx, c.t.HTTP.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.t.Endpoint.String(), bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header = c.header.Clone()
	resp, err := c.t.HTTP.HTTPClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.use.maxResponse+1))
	if err != nil {
		return 0, nil, nil, err
	}
	if int64(len(b)) > c.use.maxResponse {
		return 0, nil, nil, fmt.Errorf("response larger than %d bytes", c.use.maxResponse)
	}
	return resp.StatusCode, b, resp.Header, nil
}

// classify turns a failed attempt into the error the caller gets if it is
// the last one.
func (c *client) classify(status int, body []byte, err error, texts []string) error {
	fail := c.fail
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && ue.Timeout() || errors.Is(err, context.DeadlineExceeded) {
			return fail(memgate.EUNAVAILABLE, "", fmt.Sprintf("did not answer within %s", c.t.HTTP.Timeout), nil)
		}
		return fail(memgate.EUNAVAILABLE, "", "is unreachable", err)
	}
	msg, code := c.wire.ErrorMessage(body)
	var secrets []string
	if c.t.APIKey != "" {
		secrets = []string{c.t.APIKey}
	}
	quoted := Redact(msg, texts, secrets, c.use.sent)
	detail := fmt.Sprintf("answered %d %s", status, http.StatusText(status))
	if code != "" && isCode(code) {
		detail += " (" + code + ")"
	}
	if quoted != "" {
		detail += ": " + quoted
	}
	switch {
	case c.wire.UnknownModel(status, msg, code):
		return fail(memgate.EINVALID, c.use.field, fmt.Sprintf("does not know the model (%s); check the configured model name", detail), nil)
	case status == http.StatusNotFound:
		return fail(memgate.EINVALID, c.use.field, fmt.Sprintf("has no %s endpoint at the configured URL (%s); check the URL", c.use.service, detail), nil)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fail(memgate.EINVALID, c.use.field, fmt.Sprintf("refused the credentials (%s); check the API key", detail), nil)
	case status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500:
		return fail(memgate.EUNAVAILABLE, "", detail, nil)
	default:
		return fail(memgate.EINVALID, "", "refused the request: "+detail, nil)
	}
}

// newError returns a *memgate.Error with code, field and msg; cause, when
// set, follows it in the error chain (for the operator) but not in the
// message a caller is shown. A cause never carries request text: it is a
// transport, context or decoding error.
func newError(code, field, msg string, cause error) error {
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

// ParseEmbedderURL checks an embedder's base URL (see parseURL).
func ParseEmbedderURL(raw string) (*url.URL, error) {
	return parseURL("embedder_url", "http://localhost:11434", raw)
}

// ParseChatURL checks a chat model's base URL (see parseURL).
func ParseChatURL(raw string) (*url.URL, error) {
	return parseURL("llm_url", "http://127.0.0.1:11434", raw)
}

// parseURL checks a base URL: http or https with a host, no query or
// fragment, trailing slashes removed. Credentials in it are refused: keys
// go in their own setting, where they are kept out of errors. Errors name
// field and give example as a good URL.
func parseURL(field, example, raw string) (*url.URL, error) {
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

// CheckEmbedder reports the first of the settings every embedder has that
// cannot work: no model (the error shows name:example, such as
// ollama:nomic-embed-text), a negative dimension, HTTP settings that
// cannot work, a negative batch size. The base URL is checked by
// ParseEmbedderURL.
func CheckEmbedder(name, model, example string, dim, maxBatch int, h provider.HTTP) error {
	switch {
	case strings.TrimSpace(model) == "":
		return memgate.FieldError(embedding.field, "%s needs a model, as in %s:%s", name, name, example)
	case dim < 0:
		return memgate.FieldError("embedder_dim", "must not be negative")
	}
	if err := h.Validate("embedder_timeout"); err != nil {
		return err
	}
	if maxBatch < 0 {
		return memgate.FieldError("embedder_batch", "must not be negative")
	}
	return nil
}

// CheckChat reports the first of the settings every chat model has that
// cannot work: no model (the error shows name:example, such as
// ollama:llama3.2), HTTP settings that cannot work. The base URL is
// checked by ParseChatURL.
func CheckChat(name, model, example string, h provider.HTTP) error {
	if strings.TrimSpace(model) == "" {
		return memgate.FieldError(chatting.field, "%s needs a model, as in %s:%s", name, name, example)
	}
	return h.Validate("llm_timeout")
}
