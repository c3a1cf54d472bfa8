// Package openai is memgate's client of the OpenAI API and the servers
// compatible with it (vLLM, llama.cpp server, Hugging Face TEI, LM Studio,
// LocalAI, Ollama's /v1, hosted gateways): an embedder (memgate.Embedder)
// on the embeddings API and a chat model (agent.Model) on the chat
// completions API, both speaking HTTP as package provider configures it.
// The API key, when set, is sent as a bearer token and never appears in an
// error.
//
// The embedder POSTs a batch of inputs to {URL}/embeddings:
//
//	{"model":"text-embedding-3-small","input":["a","b"],"encoding_format":"float","dimensions":512}
//	→ {"object":"list","data":[{"object":"embedding","index":0,"embedding":[…]},…],"model":"text-embedding-3-small","usage":{…}}
//
// data is ordered by index (servers may answer out of order). Every
// embedding carries provider "openai" (EmbedderConfig.Provider, for a
// deployment that wants another name), the model the server reports in
// "model" (the configured one when it reports none) and the dimension of
// the vector: the wire format, not the URL, is the provider, and provider
// and model are the whole provenance.
//
// The chat model POSTs to {URL}/chat/completions, without streaming:
//
//	{"model":"gpt-4o-mini","messages":[{"role":"system","content":"…"},{"role":"user","content":"…"}]}
//	→ {"id":"…","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"…"},"finish_reason":"stop"}]}
//
// A request for JSON adds "response_format":{"type":"json_object"}. The
// reply is the first choice's message content; a choice without content
// (a refusal, a tool call) is an error, as is an empty one.
//
// It speaks HTTP with the standard library only. It must never include
// input or message text or the key in an error, and never log.
package openai

import (
	"strings"

	"github.com/memgate/memgate"
)

// Provider is the default provenance of this package's embeddings and the
// name of its replies.
const Provider = "openai"

// DefaultURL is the base URL of the OpenAI API.
const DefaultURL = "https://api.openai.com/v1"

// checkKey refuses an API key that would not fit in one header line.
func checkKey(key string) error {
	if strings.ContainsAny(key, "\r\n") {
		return memgate.FieldError("api_key", "must be one line")
	}
	return nil
}
