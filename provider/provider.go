// Package provider is how memgate's clients of model servers are
// configured alike, whoever serves the model: one set of HTTP settings (a
// timeout per attempt, bounded retries, the longest wait before one, the
// http.Client) with its defaults for an embedder and for a chat model. The
// clients are one package per wire format, each offering an embedder
// (memgate.Embedder) and a chat model (agent.Model): provider/ollama for
// an Ollama server, provider/openai for the OpenAI API and the servers
// compatible with it.
//
// It holds settings only: it makes no request, and it must never hold a
// credential (an API key belongs to a provider's configuration, which
// keeps it out of errors).
package provider

import (
	"context"
	"net/http"
	"time"

	"github.com/memgate/memgate"
)

// Defaults of the HTTP settings and of an embedder's batches.
const (
	// DefaultEmbedderTimeout bounds one attempt of an embedder.
	DefaultEmbedderTimeout = 30 * time.Second
	// DefaultEmbedderMaxRetries is how often an embedder retries.
	DefaultEmbedderMaxRetries = 3
	// DefaultChatTimeout bounds one attempt of a chat model: an answer
	// takes longer than an embedding, a local model on a CPU much longer
	// (and the first call may load the model).
	DefaultChatTimeout = 120 * time.Second
	// DefaultChatMaxRetries is how often a chat model retries.
	DefaultChatMaxRetries = 2
	// DefaultMaxRetryWait is the longest wait before a retry, whether
	// from backoff or from Retry-After: a server asking for a longer wait
	// fails the call at once rather than hold it for minutes.
	DefaultMaxRetryWait = 20 * time.Second
	// DefaultMaxBatch is the most texts an embedder sends in one request
	// (the default client batch limit of Hugging Face TEI; Ollama and
	// OpenAI take more).
	DefaultMaxBatch = 32
)

// HTTP is how a client speaks HTTP to its model server. Every request is a
// POST retried, with backoff, on a transport failure, 408, 429 or 5xx;
// Retry-After is honoured up to MaxRetryWait. The zero value of a field
// means its default (see EmbedderDefaults and ChatDefaults).
type HTTP struct {
	// Timeout bounds one attempt (connect, request, response).
	Timeout time.Duration
	// MaxRetries is how often a failed attempt is retried (negative:
	// never).
	MaxRetries int
	// MaxRetryWait is the longest wait before a retry; a longer
	// Retry-After fails the call at once.
	MaxRetryWait time.Duration
	// HTTPClient makes the requests (default: a new http.Client; its
	// Timeout, if any, applies on top of Timeout).
	HTTPClient *http.Client
	// Sleep waits d between retries, or until ctx is done (default: a
	// timer honouring ctx); tests inject one that records the waits.
	Sleep func(ctx context.Context, d time.Duration) error
}

// EmbedderDefaults returns the HTTP settings of an embedder that sets
// none.
func EmbedderDefaults() HTTP {
	return HTTP{Timeout: DefaultEmbedderTimeout, MaxRetries: DefaultEmbedderMaxRetries, MaxRetryWait: DefaultMaxRetryWait}
}

// ChatDefaults returns the HTTP settings of a chat model that sets none.
func ChatDefaults() HTTP {
	return HTTP{Timeout: DefaultChatTimeout, MaxRetries: DefaultChatMaxRetries, MaxRetryWait: DefaultMaxRetryWait}
}

// WithDefaults returns h with every zero field taken from d.
func (h HTTP) WithDefaults(d HTTP) HTTP {
	if h.Timeout == 0 {
		h.Timeout = d.Timeout
	}
	if h.MaxRetries == 0 {
		h.MaxRetries = d.MaxRetries
	}
	if h.MaxRetryWait == 0 {
		h.MaxRetryWait = d.MaxRetryWait
	}
	if h.HTTPClient == nil {
		h.HTTPClient = d.HTTPClient
	}
	if h.Sleep == nil {
		h.Sleep = d.Sleep
	}
	return h
}

// Validate reports settings that cannot work, as an error on field (the
// client's timeout setting, such as "embedder_timeout").
func (h HTTP) Validate(field string) error {
	if h.Timeout < 0 || h.MaxRetryWait < 0 {
		return memgate.FieldError(field, "must not be negative")
	}
	return nil
}
