package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/policy"
)

// extractReason is the reason stored when a candidate gives none.
const extractReason = "proposed by the model from a conversation"

// extract asks the model for facts and preferences about the person in
// the exchange, validates its answer and passes each valid candidate
// through the write gate as source assistant, principal-wide (agent
// factAgent, no conversation), with Supersedes set to what it replaces.
// Nothing of a malformed answer is stored or logged.
func (a *Agent) extract(ctx context.Context, s memgate.Scope, factAgent, message, reply string, rec *memgate.RecallResult) *Extraction {
	x := &Extraction{PendingIDs: []string{}, Memories: []Outcome{}}
	shown := make(map[string]bool, len(rec.Results))
	said := make(map[string]*memgate.Memory, len(rec.Results))
	for _, h := range rec.Results {
		shown[h.Memory.ID] = true
		if sig := string(h.Memory.Kind) + ":" + policy.Signature(h.Memory.Content); said[sig] == nil {
			said[sig] = h.Memory
		}
	}
	out, err := a.cfg.Model.Chat(ctx, ChatRequest{Messages: extractMessages(rec.Context, message, reply), JSON: true})
	if err != nil {
		x.Error = errorInfo(err)
		return x
	}
	cands, proposed, dropped, ok := parseCandidates(out.Content, shown)
	if !ok {
		x.Malformed = 1
		return x
	}
	x.Proposed, x.Dropped = proposed, dropped
	for _, c := range cands {
		reason := c.reason
		if reason == "" {
			reason = extractReason
		}
		m := memgate.Memory{
			Tenant: s.Tenant, Principal: s.Principal, Agent: factAgent,
			Kind: c.kind, Source: memgate.SourceAssistant, Content: c.content, Reason: reason,
			Metadata: map[string]any{"extracted_from_conversation": s.Conversation},
		}
		if prev := said[string(c.kind)+":"+policy.Signature(c.content)]; prev != nil && c.replaces == "" {
			// A restatement of a memory the turn was shown: a duplicate
			// folds only into a memory of its own source (the write
			// gate's dedup), so one the person stated would be stored
			// again as the model's. It is that memory, and nothing is
			// written.
			x.Deduplicated++
			x.Memories = append(x.Memories, Outcome{ID: prev.ID, Kind: prev.Kind, Source: prev.Source, Status: string(prev.Status),
				Deduplicated: true, Content: prev.Content, Reason: prev.Reason})
			continue
		}
		o := a.remember(ctx, m, c.replaces)
		switch {
		case o.Status == StatusRefused || o.Status == StatusFailed:
			x.Refused++
		case o.Deduplicated:
			x.Deduplicated++
		default:
			x.Stored++
			if o.Status == string(memgate.StatusPending) {
				x.PendingIDs = append(x.PendingIDs, o.ID)
			}
		}
		if o.ID != "" {
			o.Content, o.Reason = m.Content, m.Reason
		}
		x.Memories = append(x.Memories, o)
	}
	return x
}

// candidate is one validated proposal.
type candidate struct {
	kind                      memgate.Kind
	content, reason, replaces string
}

// parseCandidates validates an extraction answer strictly. It must be one
// JSON object whose only key is "memories", an array; otherwise ok is
// false (malformed) and nothing is returned. Each item must be an object
// with known keys only (kind, content, reason, replaces), kind "fact" or
// "preference", content a non-blank string of at most MaxCandidateBytes,
// reason (optional) a string of at most MaxCandidateBytes, and replaces
// (optional) the id of a memory in shown, not named by an earlier item;
// null stands for an absent optional key. An item that fails is dropped,
// as is every item after the first MaxCandidates. proposed is the number
// of items; proposed = len(cands) + dropped.
func parseCandidates(s string, shown map[string]bool) (cands []candidate, proposed, dropped int, ok bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil || top == nil {
		return nil, 0, 0, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, 0, 0, false // trailing data after the object
	}
	raw, has := top["memories"]
	if !has || len(top) != 1 {
		return nil, 0, 0, false
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		return nil, 0, 0, false
	}
	used := map[string]bool{}
	for i, it := range items {
		if i >= MaxCandidates {
			dropped += len(items) - i
			break
		}
		c, valid := parseCandidate(it, shown)
		if !valid || (c.replaces != "" && used[c.replaces]) {
			dropped++
			continue
		}
		if c.replaces != "" {
			used[c.replaces] = true
		}
		cands = append(cands, c)
	}
	return cands, len(items), dropped, true
}

func parseCandidate(raw json.RawMessage, shown map[string]bool) (candidate, bool) {
	var c candidate
	var f map[string]json.RawMessage
	if json.Unmarshal(raw, &f) != nil || f == nil {
		return c, false
	}
	for k := range f {
		switch k {
		case "kind", "content", "reason", "replaces":
		default:
			return c, false
		}
	}
	kind, ok := jsonString(f["kind"])
	if !ok || (kind != string(memgate.KindFact) && kind != string(memgate.KindPreference)) {
		return c, false
	}
	c.kind = memgate.Kind(kind)
	if c.content, ok = jsonString(f["content"]); !ok {
		return c, false
	}
	c.content = strings.TrimSpace(c.content)
	if memgate.CheckContent(c.content, MaxCandidateBytes) != nil {
		return c, false
	}
	if c.reason, ok = optString(f["reason"]); !ok {
		return c, false
	}
	c.reason = strings.TrimSpace(c.reason)
	if memgate.CheckText("reason", c.reason, MaxCandidateBytes) != nil {
		return c, false
	}
	if c.replaces, ok = optString(f["replaces"]); !ok {
		return c, false
	}
	if c.replaces != "" && !shown[c.replaces] {
		return c, false
	}
	return c, true
}

// jsonString decodes a required JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	if raw == nil {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return "", false
	}
	return s, true
}

// optString decodes an optional JSON string: absent or null is "".
func optString(raw json.RawMessage) (string, bool) {
	if raw == nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return "", true
	}
	return jsonString(raw)
}
