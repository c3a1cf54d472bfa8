package ollama

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
	// URL is the server's base URL (default DefaultURL); requests go to
	// URL + "/api/chat".
	URL string
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
	if err := httpmodel.CheckChat(Provider, c.Model, "llama3.2", c.HTTP); err != nil {
		return err
	}
	_, err := httpmodel.ParseChatURL(c.URL)
	return err
}

// ChatModel calls an Ollama server's /api/chat. It is safe for concurrent
// use.
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
	t := httpmodel.Target{Provider: Provider, Model: cfg.Model, Endpoint: base.JoinPath("api", "chat"), HTTP: cfg.HTTP}
	return &ChatModel{c: httpmodel.NewChatClient(t, chatWire{model: cfg.Model})}, nil
}

// Chat sends the messages and returns the reply's content.
func (m *ChatModel) Chat(ctx context.Context, req agent.ChatRequest) (*agent.ChatReply, error) {
	return m.c.Chat(ctx, req)
}

// chatWire is Ollama's /api/chat format.
type chatWire struct {
	httpmodel.OllamaErrors
	model string
}

type chatRequest struct {
	Model    string              `json:"model"`
	Messages []httpmodel.Message `json:"messages"`
	Stream   bool                `json:"stream"`
	Format   string              `json:"format,omitempty"`
}

type chatResponse struct {
	Model   string `json:"model"`
	Message *struct {
		Content *string `json:"content"`
	} `json:"message"`
	Done *bool `json:"done"`
}

func (w chatWire) Request(req agent.ChatRequest) any {
	r := chatRequest{Model: w.model, Messages: httpmodel.Messages(req)}
	if req.JSON {
		r.Format = "json"
	}
	return r
}

func (chatWire) Response(body []byte) (string, string, error) {
	var r chatResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return "", "", err
	}
	if r.Message == nil || r.Message.Content == nil {
		return "", "", errors.New("no message content")
	}
	if r.Done != nil && !*r.Done {
		return "", "", errors.New("answer not done")
	}
	return *r.Message.Content, r.Model, nil
}
