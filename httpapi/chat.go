package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/agent"
)

// DefaultChatTimeout bounds one POST /v1/chat: recall, the model call and,
// with extraction, a second one, retries included. The response's write
// deadline is pushed past it, so a slow model is answered with an error
// instead of a cut connection.
const DefaultChatTimeout = 5 * time.Minute

// chatInput is the body of POST /v1/chat.
type chatInput struct {
	Tenant       string `json:"tenant"`
	Principal    string `json:"principal"`
	Agent        string `json:"agent"`
	Conversation string `json:"conversation"`
	Message      string `json:"message"`
}

// errNoModel is the answer of POST /v1/chat on a server started without a
// model.
var errNoModel = &memgate.Error{Code: memgate.EUNAVAILABLE,
	Message: "chat needs a model: start memgate serve with --llm ollama:MODEL or --llm openai:MODEL (and --llm-url URL)"}

// chat runs one turn of the agent middleware (package agent) in the scope
// the key allows and answers agent.Result: the reply, the recall with its
// explanation and the rendered block that reached the prompt, what was
// remembered, and the extraction's counts when it is on. Memories the
// model proposes are stored principal-wide, or in the key's agent when
// the key is bound to one.
func (s *server) chat(c *call) error {
	if s.cfg.Agent == nil {
		return errNoModel
	}
	var in chatInput
	if err := c.decodeBody(&in, false); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.ctx, s.cfg.ChatTimeout)
	defer cancel()
	// The server's write timeout is sized for the other routes; this one
	// waits on a model. An unsupported writer (a test recorder) is fine.
	_ = http.NewResponseController(c.w).SetWriteDeadline(time.Now().Add(s.cfg.ChatTimeout + 10*time.Second))
	res, err := c.sess.Chat(ctx, s.cfg.Agent, agent.Turn{
		Scope:   memgate.Scope{Tenant: in.Tenant, Principal: in.Principal, Agent: in.Agent, Conversation: in.Conversation},
		Message: in.Message,
	})
	if err != nil {
		return err
	}
	writeJSON(c.w, http.StatusOK, res)
	return nil
}
