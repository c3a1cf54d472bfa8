package main

import (
	"flag"
	"os"
	"strings"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/agent"
	"github.com/memgate/memgate/provider"
	"github.com/memgate/memgate/provider/ollama"
	"github.com/memgate/memgate/provider/openai"
)

// Environment of the chat model settings, the defaults of the flags (as
// for the embedder). The API key has no flag, so it stays out of shell
// history and the process list.
const (
	llmEnv    = "MEMGATE_LLM"
	llmURLEnv = "MEMGATE_LLM_URL"
	llmKeyEnv = "MEMGATE_LLM_API_KEY"
)

// llmFlags choose the chat model of serve's POST /v1/chat and of a local
// memgate chat: ollama:MODEL or openai:MODEL (any OpenAI-compatible
// chat completions server), and whether facts are extracted.
type llmFlags struct {
	spec, url  string
	timeout    time.Duration
	extract    bool
	givenFlags // the model flags
}

func (f *llmFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.spec, "llm", os.Getenv(llmEnv), "chat model: ollama:MODEL or openai:MODEL (an OpenAI-compatible server; key in $"+llmKeyEnv+"); default $"+llmEnv+"; none: no chat")
	fs.StringVar(&f.url, "llm-url", os.Getenv(llmURLEnv), "base URL of the chat model (ollama default "+ollama.DefaultURL+", openai default "+openai.DefaultURL+")")
	fs.DurationVar(&f.timeout, "llm-timeout", 0, "time limit of one chat model request (default 2m)")
	fs.BoolVar(&f.extract, "extract", false, "after each exchange, ask the model to propose facts and preferences about the person; they pass the write gate as source assistant (pending for approval under the default policy)")
	f.givenFlags = givenFlags{fs, func(name string) bool { return strings.HasPrefix(name, "llm") || name == "extract" }}
}

// model builds the chat model the flags name, or nil without --llm (then
// --llm-url and --extract are refused, as they would do nothing). It
// makes no request.
func (f *llmFlags) model() (agent.Model, error) {
	spec := strings.TrimSpace(f.spec)
	if spec == "" {
		switch {
		case f.url != "":
			return nil, memgate.FieldError("llm", "is required with --llm-url: ollama:MODEL or openai:MODEL")
		case f.extract:
			return nil, memgate.FieldError("llm", "is required with --extract: ollama:MODEL or openai:MODEL")
		}
		return nil, nil
	}
	kind, model, _ := strings.Cut(spec, ":")
	model = strings.TrimSpace(model)
	switch kind {
	case "ollama":
		return ollama.NewChatModel(ollama.ChatConfig{Model: model, URL: f.url, HTTP: provider.HTTP{Timeout: f.timeout}})
	case "openai":
		return openai.NewChatModel(openai.ChatConfig{Model: model, URL: f.url, HTTP: provider.HTTP{Timeout: f.timeout}, APIKey: os.Getenv(llmKeyEnv)})
	}
	return nil, memgate.FieldError("llm", "unknown chat model %q: use ollama:MODEL or openai:MODEL", clipArg(spec))
}

// clipArg shortens a command-line value for an error message.
func clipArg(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
