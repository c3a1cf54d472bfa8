// Package agent puts memory around every model call. Before the call it
// recalls what matters for the user's message (the relevance floor always
// applied) and gives it to the model as delimited data under the
// instruction that memories are context supplied by the memory system,
// possibly outdated, never commands. After the call it remembers the
// exchange through the write gate (the user's turn as source user, the
// reply as source assistant, both of kind message, in the conversation)
// and, when Config.Extract is set, asks the model to propose facts and
// preferences about the person, which are validated strictly and then pass
// the write gate like any other memory (held as pending for approval under
// the default policy).
//
// It must never log a message, a reply, a prompt, model output, memory
// content or a principal's identifier (ids of memories, recalls and
// conversations, counts and timings only); never store model output that
// failed validation, nor anything without the write gate; and never act
// outside the Turn's scope, which the caller derives from a credential.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"
	"unicode"

	"github.com/memgate/memgate"
)

// Defaults and limits for Config.
const (
	// DefaultSystemPrompt is the operator's part of the system message
	// when Config.SystemPrompt is empty.
	DefaultSystemPrompt = "You are a helpful assistant."
	// DefaultK is how many memories are recalled at most for one turn.
	DefaultK = memgate.DefaultRecallK
	// DefaultBudgetChars bounds the content of the memories placed in a
	// prompt (whole memories, best first: recall stops at the first that
	// does not fit). It is the default size limit of one memory, so the
	// best memory always fits.
	DefaultBudgetChars = memgate.DefaultMaxContentBytes
	// DefaultMaxMessageBytes bounds a user message: it is the recall
	// query, so it can be no longer than memgate.MaxQueryBytes.
	DefaultMaxMessageBytes = memgate.MaxQueryBytes
	// MaxCandidates is the most memories one extraction may propose;
	// further ones are dropped.
	MaxCandidates = 5
	// MaxCandidateBytes bounds a proposed memory's content and reason.
	MaxCandidateBytes = 500
)

// Engine is the memory operations the agent runs on (it recalls and
// remembers through them): *engine.Engine, a key's *guard.Session, or a
// server's, through the Go client (client.Client.Memories). agent_test.go
// asserts the engine is one: the package itself speaks the root package's
// contract only. Every call goes through the gates.
type Engine = memgate.Memories

// Config configures an Agent. Engine and Model are required.
type Config struct {
	Engine Engine
	Model  Model
	// SystemPrompt is the operator's instructions to the model (default
	// DefaultSystemPrompt). The memory block follows it, in the same
	// system message.
	SystemPrompt string
	// K is the most memories recalled per turn (default DefaultK, at most
	// memgate.MaxRecallK).
	K int
	// MinScore is the relevance floor of recall (0: the engine's default,
	// rank.DefaultFloor). It cannot be turned off: an unrelated message
	// recalls nothing and nothing is injected.
	MinScore float64
	// BudgetChars bounds the content recalled into one prompt (default
	// DefaultBudgetChars).
	BudgetChars int
	// Extract turns on fact extraction: after each exchange a second model
	// call proposes facts and preferences about the person, each stored
	// through the write gate as source assistant (off by default).
	Extract bool
	// MaxMessageBytes bounds a user message (default and maximum
	// DefaultMaxMessageBytes).
	MaxMessageBytes int
	// Logger receives one line per turn: ids, counts and timings (default:
	// discard).
	Logger *slog.Logger
	// Now is the clock of new conversation ids (default time.Now).
	Now func() time.Time
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.SystemPrompt == "" {
		c.SystemPrompt = DefaultSystemPrompt
	}
	if c.K == 0 {
		c.K = DefaultK
	}
	if c.BudgetChars == 0 {
		c.BudgetChars = DefaultBudgetChars
	}
	if c.MaxMessageBytes == 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Engine == nil:
		return errors.New("agent: engine is required")
	case c.Model == nil:
		return errors.New("agent: model is required")
	case c.K < 0 || c.K > memgate.MaxRecallK:
		return fmt.Errorf("agent: k must be between 1 and %d", memgate.MaxRecallK)
	case math.IsNaN(c.MinScore) || c.MinScore < 0 || c.MinScore > 1:
		return errors.New("agent: min score must be between 0 and 1")
	case c.BudgetChars < 0 || c.BudgetChars > memgate.MaxBudgetChars:
		return fmt.Errorf("agent: budget chars must be between 0 and %d", memgate.MaxBudgetChars)
	case c.MaxMessageBytes < 0 || c.MaxMessageBytes > memgate.MaxQueryBytes:
		return fmt.Errorf("agent: max message bytes must be between 1 and %d", memgate.MaxQueryBytes)
	}
	return nil
}

// Agent is safe for concurrent use.
type Agent struct {
	cfg Config
	log *slog.Logger
}

// New returns an agent over cfg.Engine and cfg.Model.
func New(cfg Config) (*Agent, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Agent{cfg: cfg, log: cfg.Logger}, nil
}

// With returns an agent like a whose memory calls go to e: the same model
// and configuration, another engine (package guard passes a key's session,
// so every recall and remember of the turn is authorized as the key's).
func (a *Agent) With(e Engine) *Agent {
	c := *a
	c.cfg.Engine = e
	return &c
}

// Turn is one user message in a conversation.
type Turn struct {
	// Scope is whom the turn is for, derived by the caller from a
	// credential (auth.ScopeFor): tenant and principal are required; agent
	// narrows recall and is stored with the exchange. An empty
	// Conversation starts a new one (Result.Conversation names it).
	Scope   memgate.Scope
	Message string
	// FactAgent is the agent extracted facts and preferences are stored
	// under. Empty stores them principal-wide (every agent of the
	// principal sees them); a caller whose credential is bound to an agent
	// sets that agent, so that nothing is stored wider than it may write.
	FactAgent string
	// UserSource is the source the user's turn is stored as (default
	// user). A caller whose credential may not claim user (an agent key
	// without that grant) sets assistant: the agent reports what the
	// person said, and the memory says who vouches for it; the turn's
	// metadata then carries speaker "user".
	UserSource memgate.Source
}

// Result is memgate.ChatResult, a turn's outcome (the callers' contract).
type Result = memgate.ChatResult

// ModelInfo is memgate.ModelInfo (the callers' contract).
type ModelInfo = memgate.ModelInfo

// Outcome statuses besides the memory statuses (active, pending): the
// root package's OutcomeRefused and OutcomeFailed.
const (
	StatusRefused = memgate.OutcomeRefused
	StatusFailed  = memgate.OutcomeFailed
)

// Outcome is memgate.Outcome (the callers' contract).
type Outcome = memgate.Outcome

// ErrorInfo is memgate.ErrorInfo (the callers' contract).
type ErrorInfo = memgate.ErrorInfo

func errorInfo(err error) *ErrorInfo {
	code := memgate.ErrorCode(err)
	if code == memgate.EINTERNAL {
		return &ErrorInfo{Code: code, Message: "internal error"}
	}
	return &ErrorInfo{Code: code, Message: memgate.ErrorMessage(err), Field: memgate.ErrorField(err)}
}

// Extraction is memgate.Extraction (the callers' contract).
type Extraction = memgate.Extraction

// NewConversationID returns a new conversation id: "c_" and 26 base32
// characters, sorting by time.
func NewConversationID(t time.Time) string { return "c_" + memgate.NewID(t)[2:] }

// Respond runs one turn: recall for the message, the model call with the
// memory block in the system message, the exchange remembered, and (when
// on) extraction. A failed recall or model call fails the turn and
// nothing is remembered; once there is a reply, what happens to each
// memory is reported in the Result rather than failing the turn.
func (a *Agent) Respond(ctx context.Context, t Turn) (*Result, error) {
	start := time.Now()
	s := t.Scope
	if s.AllPrincipals {
		return nil, memgate.FieldError("principal", "a chat is with one principal")
	}
	if s.Conversation == "" {
		s.Conversation = NewConversationID(a.cfg.Now())
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if t.FactAgent != "" {
		if err := memgate.CheckIdent("agent", t.FactAgent); err != nil {
			return nil, err
		}
	}
	if err := a.checkMessage(t.Message); err != nil {
		return nil, err
	}
	req := memgate.RecallRequest{
		Scope: s, Query: t.Message, K: a.cfg.K, BudgetChars: a.cfg.BudgetChars,
		Explain: true, Render: true,
	}
	if a.cfg.MinScore > 0 {
		floor := a.cfg.MinScore
		req.MinScore = &floor
	}
	rec, err := a.cfg.Engine.Recall(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("recall for the message: %w", err)
	}
	modelStart := time.Now()
	reply, err := a.cfg.Model.Chat(ctx, ChatRequest{Messages: []Message{
		{Role: RoleSystem, Content: SystemMessage(a.cfg.SystemPrompt, rec.Context)},
		{Role: RoleUser, Content: t.Message},
	}})
	if err != nil {
		a.log.WarnContext(ctx, "chat model failed", "tenant", s.Tenant, "conversation", s.Conversation,
			"recall_id", rec.RecallID, "code", memgate.ErrorCode(err), "took", time.Since(modelStart))
		return nil, err
	}
	modelTook := time.Since(modelStart)
	res := &Result{
		Conversation: s.Conversation, Reply: reply.Content, Recall: rec,
		Model: ModelInfo{Provider: reply.Provider, Model: reply.Model},
	}
	// The exchange is remembered as Ingest remembers a conversation.
	user := said{source: memgate.SourceUser, content: t.Message}
	if t.UserSource != "" && t.UserSource != memgate.SourceUser {
		user.source, user.metadata = t.UserSource, map[string]any{"speaker": "user"}
	}
	asst := said{source: memgate.SourceAssistant, content: reply.Content}
	if reply.Provider != "" && reply.Model != "" {
		asst.metadata = map[string]any{"llm_provider": reply.Provider, "llm_model": reply.Model}
	}
	res.Remembered, _ = record(ctx, a.cfg.Engine, a.log, s, []said{user, asst})
	if a.cfg.Extract {
		res.Extraction = a.extract(ctx, s, t.FactAgent, t.Message, reply.Content, rec)
	}
	a.logTurn(ctx, s, res, modelTook, time.Since(start))
	return res, nil
}

// checkMessage validates a user message: UTF-8 without NUL, not blank, at
// most MaxMessageBytes.
func (a *Agent) checkMessage(msg string) error {
	if err := memgate.CheckText("message", msg, a.cfg.MaxMessageBytes); err != nil {
		return err
	}
	if strings.TrimFunc(msg, unicode.IsSpace) == "" {
		return memgate.FieldError("message", "must not be blank")
	}
	return nil
}

// remember passes m through the engine's write gate and reports what
// became of it. A refusal is an outcome, not a failure of the turn.
func (a *Agent) remember(ctx context.Context, m memgate.Memory, supersedes string) Outcome {
	o := Outcome{Kind: m.Kind, Source: m.Source, Supersedes: supersedes}
	r, err := a.cfg.Engine.Remember(ctx, memgate.RememberRequest{Memory: m, Supersedes: supersedes})
	if err != nil {
		if refused(&o, err) {
			a.log.WarnContext(ctx, "chat remember failed", "tenant", m.Tenant,
				"source", m.Source, "kind", m.Kind, "code", o.Error.Code)
		}
		return o
	}
	o.ID, o.Status, o.StatusReason, o.Deduplicated = r.ID, string(r.Status), r.StatusReason, r.Deduplicated
	if r.Supersedes != "" {
		o.Supersedes = r.Supersedes
	}
	return o
}

// refused records in o what a remember's err means for the turn: a
// refusal of the input (the write gate's, or a caller's mistake), or,
// reported true for the caller to log, a failure of the service.
func refused(o *Outcome, err error) (failed bool) {
	o.Status, o.Error = StatusRefused, errorInfo(err)
	switch o.Error.Code {
	case memgate.EPOLICY, memgate.EINVALID, memgate.ETOOLARGE, memgate.ECONFLICT, memgate.ENOTFOUND:
		return false
	}
	o.Status = StatusFailed
	return true
}

func (a *Agent) logTurn(ctx context.Context, s memgate.Scope, res *Result, modelTook, took time.Duration) {
	ids := make([]string, 0, len(res.Remembered))
	for _, o := range res.Remembered {
		if o.ID != "" {
			ids = append(ids, o.ID)
		}
	}
	attrs := []any{
		"tenant", s.Tenant, "conversation", s.Conversation,
		"recall_id", res.Recall.RecallID, "recalled", len(res.Recall.Results), "remembered", ids,
		"provider", res.Model.Provider, "model", res.Model.Model, "model_took", modelTook, "took", took,
	}
	if x := res.Extraction; x != nil {
		attrs = append(attrs, "extract_proposed", x.Proposed, "extract_dropped", x.Dropped, "extract_malformed", x.Malformed,
			"extract_stored", x.Stored, "extract_deduplicated", x.Deduplicated, "extract_refused", x.Refused, "extract_pending", x.PendingIDs)
		if x.Error != nil {
			attrs = append(attrs, "extract_error", x.Error.Code)
		}
	}
	a.log.InfoContext(ctx, "chat", attrs...)
}
