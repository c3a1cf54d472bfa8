package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"

	"github.com/memgate/memgate/agent"
	"github.com/memgate/memgate/provider"
	"github.com/memgate/memgate/provider/internal/httpmodel"
)

// ChatConfig configures a ChatModel. Model is required; the rest have
// defaults.
type ChatConfig struct {
	Model string
	// URL is the API's base URL, /v1 included (default DefaultURL);
	// requests go to URL + "/chat/completions". A URL without a path gets
	// /v1, so http://localhost:8000 means http://localhost:8000/v1.
	URL string
	// APIKey, when set, is sent as "Authorization: Bearer APIKey".
	APIKey string
	// HTTP is how requests are made (default provider.ChatDefaults).
	HTTP provider.HTTP
}

// WithDefaults returns c with every zero field set to its default.
func (c ChatConfig) WithDefaults() ChatConfig {
	c.URL = cmp.Or(c.URL, DefaultURL)
	c.HTTP = c.HTTP.WithDefaults(provider.ChatDefaults())
	return c
}

// Validate reports a configuration that cannot work.
func (c ChatConfig) Validate() error {
	if err := httpmodel.CheckChat(Provider, c.Model, "gpt-4o-mini", c.HTTP); err != nil {
		return err
	}
	if err := checkKey(c.APIKey); err != nil {
		return err
	}
	_, err := httpmodel.ParseChatURL(c.URL)
	return err
}

// ChatModel calls an OpenAI-compatible chat completions API. It is safe
// for concurrent use.
type ChatModel struct {
	c *httpmodel.ChatClient
}

var _ agent.Model = (*ChatModel)(nil)

// NewChatModel returns a ChatModel for cfg (defaults applied). It makes no
// request.
func NewChatModel(cfg ChatConfig) (*ChatModel, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base, _ := httpmodel.ParseChatURL(cfg.URL)
	t := httpmodel.Target{Provider: Provider, Model: cfg.Model, Endpoint: httpmodel.OpenAIEndpoint(base, "chat", "completions"), APIKey: cfg.APIKey, HTTP: cfg.HTTP}
	return &ChatModel{c: httpmodel.NewChatClient(t, chatWire{model: cfg.Model})}, nil
}

// Chat sends the messages and returns the first choice's content.
func (m *ChatModel) Chat(ctx context.Context, req agent.ChatRequest) (*agent.ChatReply, error) {
	return m.c.Chat(ctx, req)
}

// chatWire is the OpenAI /v1/chat/completions format.
type chatWire struct {
	httpmodel.OpenAIErrors
	model string
}

type responseFormat struct {
	Type string `json:"type"`
}

type chatRequest struct {
	Model          string              `json:"model"`
	Messages       []httpmodel.Message `json:"messages"`
	ResponseFormat *responseFormat     `json:"response_format,omitempty"`
	Stream         bool                `json:"stream"`
}

type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message *struct {
			Content *string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
}

func (w chatWire) Request(req agent.ChatRequest) any {
	r := chatRequest{Model: w.model, Messages: httpmodel.Messages(req)}
	if req.JSON {
		r.ResponseFormat = &responseFormat{Type: "json_object"}
	}
	return r
}

func (chatWire) Response(body []byte) (string, string, error) {
	var r chatResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return "", "", err
	}
	if len(r.Choices) == 0 || r.Choices[0].Message == nil || r.Choices[0].Message.Content == nil {
		return "", "", errors.New("no choice with content")
	}
	return *r.Choices[0].Message.Content, r.Model, nil
}
