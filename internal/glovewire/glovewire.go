// Package glovewire serves a semantic embedding model over the
// OpenAI-compatible embeddings API (POST /v1/embeddings), so that tests and
// benchmarks reach a semantic embedder the way users reach one, through
// memgate's openai client and the real wire format, with no network and
// no model download.
//
// The model, Model, embeds a text as the mean of the GloVe vectors
// (package wordvec) of its content words: "GloVe sentence vectors", a
// plain semantic model built from the same table as the built-in embedder
// but without its lexical part or its word weights. A text with no word in
// the table embeds as a fixed vector. The server holds no state, logs
// nothing and never echoes input text.
package glovewire

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"

	"github.com/memgate/memgate/analysis"
	"github.com/memgate/memgate/embedder/builtin/wordvec"
)

// Model is the model name the server answers with, and Dim its dimension.
const (
	Model = "glove-mean-100d"
	Dim   = wordvec.Dim
)

// Vector returns the model's embedding of text (unit length).
func Vector(text string) []float32 {
	tb := wordvec.Default()
	acc := make([]float64, Dim)
	n := 0
	for _, w := range analysis.AppendWords(nil, text) {
		if i, ok := tb.Lookup(w.Token); ok {
			tb.AddTo(acc, i, 1)
			n++
		}
	}
	out := make([]float32, Dim)
	var s float64
	for _, x := range acc {
		s += x * x
	}
	if n == 0 || s == 0 {
		out[0] = 1
		return out
	}
	inv := 1 / math.Sqrt(s)
	for i, x := range acc {
		out[i] = float32(x * inv)
	}
	return out
}

// Handler answers POST /v1/embeddings as an OpenAI-compatible server
// does: {"model", "input": string or [string]} → {"object": "list",
// "data": [{"object": "embedding", "index", "embedding"}], "model",
// "usage"}. Another model name is a 404 with an OpenAI error body; a
// request for other dimensions is a 400.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model      string          `json:"model"`
			Input      json.RawMessage `json:"input"`
			Dimensions int             `json:"dimensions"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 32<<20)).Decode(&req); err != nil {
			fail(w, http.StatusBadRequest, "invalid_request_error", "the body is not a valid request")
			return
		}
		if req.Model != Model {
			fail(w, http.StatusNotFound, "model_not_found", "the model does not exist")
			return
		}
		if req.Dimensions != 0 && req.Dimensions != Dim {
			fail(w, http.StatusBadRequest, "invalid_request_error", "this model has 100 dimensions")
			return
		}
		var inputs []string
		if err := json.Unmarshal(req.Input, &inputs); err != nil {
			var one string
			if err := json.Unmarshal(req.Input, &one); err != nil {
				fail(w, http.StatusBadRequest, "invalid_request_error", "input must be a string or an array of strings")
				return
			}
			inputs = []string{one}
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		resp := struct {
			Object string `json:"object"`
			Data   []item `json:"data"`
			Model  string `json:"model"`
			Usage  struct {
				PromptTokens int `json:"prompt_tokens"`
				TotalTokens  int `json:"total_tokens"`
			} `json:"usage"`
		}{Object: "list", Model: Model}
		for i, s := range inputs {
			resp.Data = append(resp.Data, item{Object: "embedding", Index: i, Embedding: Vector(s)})
			n := len(analysis.Tokens(s))
			resp.Usage.PromptTokens += n
			resp.Usage.TotalTokens += n
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	})
	return mux
}

func fail(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": code}})
}

// Start starts the server on a loopback port and returns it; its URL with
// "/v1" is the base URL for memgate's openai embedder. Close it when done.
func Start() *httptest.Server { return httptest.NewServer(Handler()) }
