package main

import (
	"flag"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/provider"
	"github.com/memgate/memgate/provider/ollama"
	"github.com/memgate/memgate/provider/openai"
)

// Environment of the embedder settings. The flags default to them, so a
// deployment sets them once for serve and every local command alike (a
// local remember must embed with the server's model). The API key has no
// flag, so it stays out of shell history and the process list.
const (
	embedderEnv    = "MEMGATE_EMBEDDER"
	embedderURLEnv = "MEMGATE_EMBEDDER_URL"
	embedderDimEnv = "MEMGATE_EMBEDDER_DIM"
	embedderKeyEnv = "MEMGATE_EMBEDDER_API_KEY"
)

// embedderFlags choose the embedder: builtin, ollama:MODEL or openai:MODEL.
type embedderFlags struct {
	spec, url  string
	dim, batch int
	timeout    time.Duration
	registered bool
	givenFlags // the embedder flags
}

func (f *embedderFlags) register(fs *flag.FlagSet) {
	f.registered = true
	spec := os.Getenv(embedderEnv)
	if spec == "" {
		spec = "builtin"
	}
	dim, _ := strconv.Atoi(os.Getenv(embedderDimEnv))
	fs.StringVar(&f.spec, "embedder", spec, "embedder: builtin ("+builtin.Model+"), builtin:lexical-v1, ollama:MODEL or openai:MODEL (an OpenAI-compatible server; key in $"+embedderKeyEnv+"); default $"+embedderEnv+" or builtin")
	fs.StringVar(&f.url, "embedder-url", os.Getenv(embedderURLEnv), "base URL of the embedder (ollama default "+ollama.DefaultURL+", openai default "+openai.DefaultURL+")")
	fs.IntVar(&f.dim, "embedder-dim", dim, "expected vector dimension (openai: also requested as \"dimensions\"); 0: what the model answers")
	fs.IntVar(&f.batch, "embedder-batch", 0, "most texts per embedder request (default 32)")
	fs.DurationVar(&f.timeout, "embedder-timeout", 0, "time limit of one embedder request (default 30s)")
	f.givenFlags = givenFlags{fs, func(name string) bool { return strings.HasPrefix(name, "embedder") }}
}

// embedder builds the embedder the flags name. It makes no request: serve
// and reembed probe it; the other commands meet any problem on first use.
func (f *embedderFlags) embedder() (memgate.Embedder, error) {
	spec := strings.TrimSpace(f.spec)
	if !f.registered || spec == "" {
		spec = "builtin"
	}
	kind, model, _ := strings.Cut(spec, ":")
	model = strings.TrimSpace(model)
	switch kind {
	case "builtin":
		if f.url != "" || f.dim != 0 {
			return nil, memgate.FieldError("embedder", "builtin takes no --embedder-url or --embedder-dim")
		}
		if model != "" && !strings.HasPrefix(model, builtin.Provider+"/") {
			model = builtin.Provider + "/" + model // builtin:lexical-v1 names builtin/lexical-v1
		}
		return builtin.NewModel(model)
	case "ollama":
		return ollama.NewEmbedder(ollama.EmbedderConfig{Model: model, URL: f.url, Dim: f.dim, MaxBatch: f.batch, HTTP: provider.HTTP{Timeout: f.timeout}})
	case "openai":
		return openai.NewEmbedder(openai.EmbedderConfig{Model: model, URL: f.url, Dimensions: f.dim, MaxBatch: f.batch,
			HTTP: provider.HTTP{Timeout: f.timeout}, APIKey: os.Getenv(embedderKeyEnv)})
	}
	return nil, memgate.FieldError("embedder", "unknown embedder %q: use builtin, builtin:lexical-v1, ollama:MODEL or openai:MODEL", spec)
}
