package agent

import "context"

// Role is who says a chat message.
type Role string

// Chat roles.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one chat message.
type Message struct {
	Role    Role
	Content string
}

// ChatRequest is one call to a chat model.
type ChatRequest struct {
	Messages []Message
	// JSON asks the model for one JSON object (OpenAI's response_format
	// json_object, Ollama's format json). The answer is still only text:
	// the caller validates it.
	JSON bool
}

// ChatReply is a model's answer.
type ChatReply struct {
	Content string
	// Provider and Model name what answered: the wire format ("openai",
	// "ollama") and the model the server reports (the configured one when
	// it reports none).
	Provider string
	Model    string
}

// Model is a chat model: the port the agent calls. The HTTP clients in
// provider/openai and provider/ollama implement it.
//
// Implementations must be safe for concurrent use, honour ctx, retry only
// what may succeed later, and never put message text or credentials in an
// error or a log. An empty answer is an error, not a reply.
type Model interface {
	Chat(ctx context.Context, req ChatRequest) (*ChatReply, error)
}
