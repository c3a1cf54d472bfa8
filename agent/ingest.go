package agent

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/memgate/memgate"
)

// Message roles of a conversation handed to Ingest, and the source each
// is stored as (the user's may be stored as the assistant's report of it:
// Ingestion.UserSource).
var roleSources = map[string]memgate.Source{
	"user":      memgate.SourceUser,
	"assistant": memgate.SourceAssistant,
	"tool":      memgate.SourceTool,
	"system":    memgate.SourceSystem,
}

// RoleSource returns the source a message of role is stored as, and
// whether role is one Ingest knows.
func RoleSource(role string) (memgate.Source, bool) {
	s, ok := roleSources[role]
	return s, ok
}

// MaxIngestMessages bounds the messages of one Ingest: a batch's bound.
const MaxIngestMessages = 500

// maxIngestContentBytes bounds one message's text at the edge; the write
// gate's policy limit (8 KiB by default) then refuses what is longer, as
// an outcome of that message.
const maxIngestContentBytes = 1 << 20

// clockSkew is how far in the future a message's time may be (the
// caller's clock may run ahead of the server's).
const clockSkew = 5 * time.Minute

// IngestMessage is memgate.IngestMessage (the callers' contract).
type IngestMessage = memgate.IngestMessage

// Ingestion is a conversation handed to memgate: the same path as a
// chat's after-call step, without the model call.
type Ingestion struct {
	// Scope is whom the conversation is with, derived from a credential:
	// tenant, principal and conversation are required; agent is stored
	// with every message.
	Scope    memgate.Scope
	Messages []IngestMessage
	// FactAgent and UserSource are as in Turn. Sources, when set, says
	// which sources the caller may claim: a role whose source it may not
	// claim is refused, naming messages[i].role (the user's role falls
	// back to UserSource first).
	FactAgent  string
	UserSource memgate.Source
	MayClaim   func(memgate.Source) bool
	// ReportSource, when set, is the source an assistant's or a tool's
	// message is stored as when the caller may not claim that role's own
	// source: the caller's report of what was said, the message's
	// metadata carrying the speaker (a person's key pasting a transcript:
	// source user, speaker assistant). A system message is never
	// reported: without the claim it is refused.
	ReportSource memgate.Source
	// IdempotencyKey, when set, makes a retry safe: message i is
	// remembered with the key "KEY#i", so a retry stores nothing twice.
	IdempotencyKey string
}

// IngestResult is memgate.IngestResult (the callers' contract).
type IngestResult = memgate.IngestResult

// said is one message to remember, its source decided.
type said struct {
	source   memgate.Source
	content  string
	metadata map[string]any
	key      string
}

// Check validates an ingestion at the edge, before anything is stored:
// the scope, one to MaxIngestMessages messages, each with a known role
// whose source the caller may claim, text without NUL that is not blank,
// and a time not in the future. An error names its field
// (messages[i].role).
func (in Ingestion) Check(now time.Time) error {
	s := in.Scope
	switch {
	case s.AllPrincipals || s.Principal == "":
		return memgate.FieldError("principal", "is required: a conversation is with one principal")
	case s.Conversation == "":
		return memgate.FieldError("conversation", "is required")
	}
	if err := s.Validate(); err != nil {
		return err
	}
	if in.FactAgent != "" {
		if err := memgate.CheckIdent("agent", in.FactAgent); err != nil {
			return err
		}
	}
	switch n := len(in.Messages); {
	case n == 0:
		return memgate.FieldError("messages", "is required: at least one message")
	case n > MaxIngestMessages:
		return &memgate.Error{Code: memgate.ETOOLARGE, Field: "messages", Message: "holds " + strconv.Itoa(n) + " messages, the limit is " + strconv.Itoa(MaxIngestMessages)}
	}
	for i, m := range in.Messages {
		field := "messages[" + strconv.Itoa(i) + "]."
		if _, err := in.source(m.Role); err != nil {
			return &memgate.Error{Code: memgate.ErrorCode(err), Field: field + "role", Message: memgate.ErrorMessage(err)}
		}
		// The write gate judges each message's size against the policy
		// (an outcome, like any refusal); here only the request's bound.
		if err := memgate.CheckText(field+"content", m.Content, maxIngestContentBytes); err != nil {
			return err
		}
		if strings.TrimFunc(m.Content, unicode.IsSpace) == "" {
			return memgate.FieldError(field+"content", "must not be blank")
		}
		if m.At != nil && m.At.After(now.Add(clockSkew)) {
			return memgate.FieldError(field+"at", "is in the future")
		}
	}
	return nil
}

// source is the source a message of role is stored as for this caller.
func (in Ingestion) source(role string) (memgate.Source, error) {
	src, ok := roleSources[role]
	if !ok {
		return "", memgate.Errorf(memgate.EINVALID, "must be user, assistant, tool or system")
	}
	if role == "user" && in.UserSource != "" {
		src = in.UserSource
	}
	if reported(role) && in.ReportSource != "" && in.MayClaim != nil && !in.MayClaim(src) {
		src = in.ReportSource
	}
	if in.MayClaim != nil && !in.MayClaim(src) {
		return "", memgate.Errorf(memgate.EFORBIDDEN, "is stored as source %s, which this API key may not claim (GET /v1/whoami lists the ones it may); "+
			"an admin grants sources to a new key with memgate keys create --role ROLE --sources SOURCE,SOURCE", src)
	}
	return src, nil
}

// reported says whether a message of role may be stored as the caller's
// report of it (Ingestion.ReportSource).
func reported(role string) bool { return role == "assistant" || role == "tool" }

// Ingest stores a conversation's messages as message memories through
// eng (the same path as a chat turn's exchange): one outcome per message,
// a refusal of the write gate being an outcome, not a failure. It does
// not extract; (*Agent).Ingest does, when the agent is configured to.
func Ingest(ctx context.Context, eng Engine, in Ingestion) (*IngestResult, error) {
	return ingest(ctx, eng, nil, in)
}

func ingest(ctx context.Context, eng Engine, log *slog.Logger, in Ingestion) (*IngestResult, error) {
	if err := in.Check(time.Now()); err != nil {
		return nil, err
	}
	turns := make([]said, len(in.Messages))
	for i, m := range in.Messages {
		src, _ := in.source(m.Role)
		t := said{source: src, content: m.Content}
		if own := roleSources[m.Role]; src != own {
			// Stored as someone's report of it: the memory says who spoke.
			t.metadata = map[string]any{"speaker": m.Role}
		}
		if m.At != nil {
			if t.metadata == nil {
				t.metadata = map[string]any{}
			}
			t.metadata["said_at"] = m.At.UTC().Format(time.RFC3339Nano)
		}
		if in.IdempotencyKey != "" {
			t.key = in.IdempotencyKey + "#" + strconv.Itoa(i)
		}
		turns[i] = t
	}
	out, replayed := record(ctx, eng, log, in.Scope, turns)
	return &IngestResult{Conversation: in.Scope.Conversation, Remembered: out, Replayed: replayed}, nil
}

// Ingest is Ingest with extraction when the agent extracts: after the
// messages are stored, the model proposes facts and preferences from what
// the user said and what was answered, through the write gate exactly as
// a chat turn's (pending where policy says so, consolidated by
// supersession). A retry that stored nothing extracts nothing.
func (a *Agent) Ingest(ctx context.Context, in Ingestion) (*IngestResult, error) {
	res, err := ingest(ctx, a.cfg.Engine, a.log, in)
	if err != nil || !a.cfg.Extract || res.Replayed {
		return res, err
	}
	var user, reply []string
	for _, m := range in.Messages {
		switch m.Role {
		case "user":
			user = append(user, m.Content)
		case "assistant":
			reply = append(reply, m.Content)
		}
	}
	if len(user) == 0 {
		return res, nil
	}
	message := strings.Join(user, "\n")
	if len(message) > a.cfg.MaxMessageBytes {
		message = message[len(message)-a.cfg.MaxMessageBytes:] // the latest of what the user said
		message = strings.ToValidUTF8(message, "")
	}
	rec, err := a.cfg.Engine.Recall(ctx, memgate.RecallRequest{Scope: in.Scope, Query: message, K: a.cfg.K, BudgetChars: a.cfg.BudgetChars, Render: true})
	if err != nil {
		res.Extraction = &Extraction{PendingIDs: []string{}, Memories: []Outcome{}, Error: errorInfo(err)}
		return res, nil
	}
	res.Extraction = a.extract(ctx, in.Scope, in.FactAgent, message, strings.Join(reply, "\n"), rec)
	return res, nil
}

// record remembers turns in order, one outcome each, and reports whether
// every one was a replay of an earlier call.
func record(ctx context.Context, eng Engine, log *slog.Logger, s memgate.Scope, turns []said) ([]Outcome, bool) {
	out := make([]Outcome, len(turns))
	replayed := len(turns) > 0
	for i, t := range turns {
		m := memgate.Memory{Tenant: s.Tenant, Principal: s.Principal, Agent: s.Agent, Conversation: s.Conversation,
			Kind: memgate.KindMessage, Source: t.source, Content: t.content, Metadata: t.metadata}
		o := Outcome{Kind: m.Kind, Source: m.Source}
		r, err := eng.Remember(ctx, memgate.RememberRequest{Memory: m, IdempotencyKey: t.key})
		if err != nil {
			if refused(&o, err) && log != nil {
				log.WarnContext(ctx, "remember failed", "tenant", m.Tenant, "source", m.Source, "kind", m.Kind, "code", o.Error.Code)
			}
			out[i], replayed = o, false
			continue
		}
		o.ID, o.Status, o.StatusReason, o.Deduplicated = r.ID, string(r.Status), r.StatusReason, r.Deduplicated
		replayed = replayed && r.Replayed
		out[i] = o
	}
	return out, replayed
}
