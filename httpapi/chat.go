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

// ingestInput is the body of POST /v1/conversations/{id}/messages.
type ingestInput struct {
	Tenant    string                `json:"tenant"`
	Principal string                `json:"principal"`
	Agent     string                `json:"agent"`
	Messages  []agent.IngestMessage `json:"messages"`
}

// ingest stores a conversation the application already had (mem0's
// add(messages)): its messages as message memories, each with the source
// its role gives within what the key may claim, and, on a server with a
// model that extracts, the facts proposed from it through the write gate
// as a chat turn's. An Idempotency-Key makes a retry store nothing twice
// (message i is keyed KEY#i): 201 when something was stored, 200 with
// replayed true when the retry stored nothing.
func (s *server) ingest(c *call) error {
	key, err := idempotencyKey(c.r)
	if err != nil {
		return err
	}
	var in ingestInput
	if err := c.decodeBody(&in, false); err != nil {
		return err
	}
	conv := c.r.PathValue("id")
	if err := memgate.CheckIdent("conversation", conv); err != nil {
		return err
	}
	ctx := c.ctx
	if s.cfg.Agent != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(c.ctx, s.cfg.ChatTimeout)
		defer cancel()
		_ = http.NewResponseController(c.w).SetWriteDeadline(time.Now().Add(s.cfg.ChatTimeout + 10*time.Second))
	}
	res, err := c.sess.Ingest(ctx, s.cfg.Agent, agent.Ingestion{
		Scope:          memgate.Scope{Tenant: in.Tenant, Principal: in.Principal, Agent: in.Agent, Conversation: conv},
		Messages:       in.Messages,
		IdempotencyKey: key,
	})
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if res.Replayed {
		status = http.StatusOK
	}
	writeJSON(c.w, status, res)
	return nil
}
