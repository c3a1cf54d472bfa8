// Package ollama is memgate's client of an Ollama server: an embedder
// (memgate.Embedder) on its embedding API and a chat model (agent.Model)
// on its chat API, both speaking HTTP as package provider configures it.
//
// The embedder POSTs a batch of inputs to {URL}/api/embed:
//
//	{"model":"nomic-embed-text","input":["a","b"],"truncate":true}
//	→ {"model":"nomic-embed-text","embeddings":[[…],[…]]}
//
// Every embedding carries provider "ollama", the model the server reports
// (the configured one when it reports none) and the dimension of the
// vector. Inputs longer than the model's context are truncated by the
// server (truncate: true), so a long memory is embedded from its beginning
// rather than refused; the text channel of recall still sees all of it.
//
// The chat model POSTs to {URL}/api/chat, without streaming:
//
//	{"model":"llama3.2","messages":[{"role":"system","content":"…"},{"role":"user","content":"…"}],"stream":false}
//	→ {"model":"llama3.2","created_at":"…","message":{"role":"assistant","content":"…"},"done":true,"done_reason":"stop"}
//
// A request for JSON adds "format":"json". The reply is the message's
// content; an empty one is an error.
//
// It speaks HTTP with the standard library only. It must never include
// input or message text in an error, and never log.
package ollama

// Provider is the provenance of this package's embeddings and the name of
// its replies.
const Provider = "ollama"

// DefaultURL is the base URL of a local Ollama server.
const DefaultURL = "http://localhost:11434"
