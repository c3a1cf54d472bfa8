package httpmodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/agent"
)

// ChatWire is one provider's chat request and response format.
type ChatWire interface {
	// Request returns the JSON body of req.
	Request(req agent.ChatRequest) any
	// Response decodes a 2xx body into the reply text and the model the
	// server reports ("" when it does not).
	Response(body []byte) (content, model string, err error)
	// The provider's error answers (OpenAIErrors, OllamaErrors).
	ErrorWire
}

// ChatClient calls one chat endpoint, one request per call; an empty
// answer is an error. It is safe for concurrent use.
type ChatClient struct {
	t    Target
	wire ChatWire
	http *client
}

// NewChatClient returns a ChatClient for t.
func NewChatClient(t Target, w ChatWire) *ChatClient {
	c := &ChatClient{t: t, wire: w}
	c.http = newClient(t, chatting, w, c.fail, c.cancelled)
	return c
}

// Chat sends req and returns the model's answer.
func (c *ChatClient) Chat(ctx context.Context, req agent.ChatRequest) (*agent.ChatReply, error) {
	if err := ctx.Err(); err != nil {
		return nil, c.cancelled(err)
	}
	if len(req.Messages) == 0 {
		return nil, memgate.FieldError("messages", "must not be empty")
	}
	body, err := json.Marshal(c.wire.Request(req))
	if err != nil {
		return nil, fmt.Errorf("%s: encode request: %w", c.t.Provider, err)
	}
	texts := make([]string, len(req.Messages))
	for i, m := range req.Messages {
		texts[i] = m.Content
	}
	resp, err := c.http.post(ctx, body, texts)
	if err != nil {
		return nil, err
	}
	content, model, err := c.wire.Response(resp)
	if err != nil {
		// The decoder's error may quote the body: it stays out of the
		// message and out of the chain.
		return nil, c.fail(memgate.EUNAVAILABLE, "", "answered with a malformed response", nil)
	}
	if strings.TrimSpace(content) == "" {
		return nil, c.fail(memgate.EUNAVAILABLE, "", "answered with an empty reply", nil)
	}
	if model == "" {
		model = c.t.Model
	}
	return &agent.ChatReply{Content: content, Provider: c.t.Provider, Model: model}, nil
}

// cancelled is the error of a call whose context ended: unavailable, and
// errors.Is(err, context.Canceled or DeadlineExceeded) still holds.
func (c *ChatClient) cancelled(err error) error {
	what := "call was cancelled"
	if errors.Is(err, context.DeadlineExceeded) {
		what = "call ran out of time"
	}
	return c.fail(memgate.EUNAVAILABLE, "", what, err)
}

// fail returns an error with code and field whose message names the
// provider and model; cause, when set, follows it in the error chain (for
// the operator) but not in the message a caller is shown. A cause never
// carries message text: it is a transport or context error.
func (c *ChatClient) fail(code, field, what string, cause error) error {
	return newError(code, field, fmt.Sprintf("llm %s (model %q) %s", c.t.Provider, c.t.Model, what), cause)
}

// Message is a chat message as both wire families send it.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Messages returns the messages of req as they are sent.
func Messages(req agent.ChatRequest) []Message {
	ms := make([]Message, len(req.Messages))
	for i, m := range req.Messages {
		ms[i] = Message{Role: string(m.Role), Content: m.Content}
	}
	return ms
}
