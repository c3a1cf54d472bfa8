package policy

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/memgate/memgate"
)

// Reason codes: stable machine-readable words for why a memory was held or
// refused. The engine stores the decisive one as the memory's status reason.
const (
	ReasonContainsSecret   = "contains_secret"
	ReasonInstructionLike  = "instruction_like"
	ReasonRequiresApproval = "source_kind_requires_approval"
	ReasonNotAllowed       = "source_kind_not_allowed"
)

// Decision is the write gate's verdict on one memory.
type Decision struct {
	// Action is allow, pending or reject (a flag shows in Flags instead).
	Action Action
	// Status is the status to store: active for allow, pending for pending,
	// empty for reject.
	Status memgate.Status
	// Reason is the code that decided a pending or reject; empty for allow.
	// When several steps hold a memory pending, contains_secret comes
	// before instruction_like, which comes before
	// source_kind_requires_approval.
	Reason string
	// Flags records, in gate order, every rule and finding that held the
	// memory pending or flagged it: "source_kind_requires_approval" for the
	// rule, "reason:type" for each finding type (for example
	// "instruction_like:role_tag"). The engine stores them with the memory
	// (memgate.Memory.Flags) so a reviewer sees why it was held.
	Flags []string
	// Findings are what the detectors found, each naming its field. They
	// hold offsets, never text.
	Findings []Finding
	// Err is set exactly when Action is reject: a *memgate.Error with code
	// policy_violation, the field at fault, and a message naming the reason
	// and the finding types, never any of the matched text.
	Err error
}

// Decide runs the write gate's policy on m, which the caller has already
// validated (memgate.Memory.Validate): the (source, kind) rule, then secret
// detection over content, reason and metadata, then instruction detection
// over content and reason. The strictest action wins; a reject stops the
// gate at once.
//
// Decide reads m and never modifies it; it is safe for concurrent use.
func (c Config) Decide(m *memgate.Memory) Decision {
	if m == nil {
		return Decision{Action: ActionReject, Err: memgate.FieldError("memory", "is required")}
	}
	var steps []step

	// 1. Who may write what.
	switch {
	case !knownSource(m.Source):
		return rejectRule("source", "unknown source")
	case !knownKind(m.Kind):
		return rejectRule("kind", "unknown kind")
	}
	switch a := c.WriteAction(m.Source, m.Kind); a {
	case ActionAllow:
	case ActionPending:
		steps = append(steps, step{ReasonRequiresApproval, ActionPending, nil})
	default: // reject, or an action a write rule cannot have: fail closed
		return rejectRule("kind", fmt.Sprintf("source %s may not write kind %s", m.Source, m.Kind))
	}

	// 2. Secrets, anywhere in the memory.
	var findings []Finding
	secrets := memorySecrets(m)
	findings = append(findings, secrets...)
	if len(secrets) > 0 {
		a := c.SecretAction(m.Source)
		if a.rank() >= ActionReject.rank() {
			return reject(ReasonContainsSecret, secrets, steps, findings)
		}
		steps = append(steps, step{ReasonContainsSecret, a, types(secrets)})
	}

	// 3. Instructions, in what a model will read.
	var instr []Finding
	instr = appendField(instr, "content", DetectInstructions(m.Content))
	instr = appendField(instr, "reason", DetectInstructions(m.Reason))
	findings = append(findings, instr...)
	if len(instr) > 0 {
		a := c.InstructionAction(m.Source)
		if a.rank() >= ActionReject.rank() {
			return reject(ReasonInstructionLike, instr, steps, findings)
		}
		steps = append(steps, step{ReasonInstructionLike, a, types(instr)})
	}

	d := Decision{Action: ActionAllow, Status: memgate.StatusActive, Findings: findings, Flags: flags(steps)}
	// When several steps hold the memory, the reason is the one a reviewer
	// must see first: a secret, then instruction-like text, then the rule.
	for _, reason := range []string{ReasonContainsSecret, ReasonInstructionLike, ReasonRequiresApproval} {
		if slices.ContainsFunc(steps, func(s step) bool { return s.reason == reason && s.action == ActionPending }) {
			d.Action, d.Status, d.Reason = ActionPending, memgate.StatusPending, reason
			break
		}
	}
	return d
}

// step is one rule or detector that applied, with its action and the
// finding types it saw.
type step struct {
	reason string
	action Action
	types  []string
}

// flags lists the steps that held or flagged the memory.
func flags(steps []step) []string {
	var out []string
	for _, s := range steps {
		if s.action != ActionFlag && s.action != ActionPending {
			continue
		}
		if len(s.types) == 0 {
			out = append(out, s.reason)
		}
		for _, t := range s.types {
			out = append(out, s.reason+":"+t)
		}
	}
	return out
}

// types returns the distinct finding types in order of first appearance.
func types(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		if !slices.Contains(out, f.Type) {
			out = append(out, f.Type)
		}
	}
	return out
}

func rejectRule(field, detail string) Decision {
	return Decision{
		Action: ActionReject,
		Reason: ReasonNotAllowed,
		Err:    &memgate.Error{Code: memgate.EPOLICY, Field: field, Message: ReasonNotAllowed + ": " + detail},
	}
}

// reject builds a refusal for the findings of one detector. The message
// names the reason and the finding types: type names are constants of this
// package, so no byte of the scanned text can reach it.
func reject(reason string, fs []Finding, steps []step, all []Finding) Decision {
	return Decision{
		Action:   ActionReject,
		Reason:   reason,
		Flags:    flags(steps),
		Findings: all,
		Err: &memgate.Error{
			Code:    memgate.EPOLICY,
			Field:   topField(fs[0].Field),
			Message: reason + ": " + strings.Join(types(fs), ", "),
		},
	}
}

// topField returns the memory field a finding path starts with.
func topField(path string) string {
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return path
}

func appendField(out []Finding, field string, fs []Finding) []Finding {
	for _, f := range fs {
		f.Field = field
		out = append(out, f)
	}
	return out
}

// memorySecrets scans content, reason and metadata (keys and values).
func memorySecrets(m *memgate.Memory) []Finding {
	var out []Finding
	out = appendField(out, "content", DetectSecrets(m.Content))
	out = appendField(out, "reason", DetectSecrets(m.Reason))
	if len(m.Metadata) > 0 {
		out = metadataSecrets(out, "metadata", m.Metadata, 0)
	}
	return out
}

// maxMetadataDepth bounds the walk; deeper values are scanned as JSON text.
const maxMetadataDepth = 32

// metadataSecrets walks a metadata value. A finding's field is the path of
// the value; an object key appears in the path only when it is a plain
// identifier in which nothing was found, otherwise as [#n], its position in
// sorted key order, so a secret used as a key is never echoed.
func metadataSecrets(out []Finding, path string, v any, depth int) []Finding {
	switch v := v.(type) {
	case nil, bool:
	case string:
		out = appendField(out, path, DetectSecrets(v))
	case json.Number:
		out = appendField(out, path, DetectSecrets(string(v)))
	case float64:
		out = appendField(out, path, DetectSecrets(strconv.FormatFloat(v, 'f', -1, 64)))
	case float32:
		out = appendField(out, path, DetectSecrets(strconv.FormatFloat(float64(v), 'f', -1, 32)))
	case int:
		out = appendField(out, path, DetectSecrets(strconv.Itoa(v)))
	case int64:
		out = appendField(out, path, DetectSecrets(strconv.FormatInt(v, 10)))
	case uint64:
		out = appendField(out, path, DetectSecrets(strconv.FormatUint(v, 10)))
	case map[string]any:
		if depth >= maxMetadataDepth {
			return metadataJSON(out, path, v)
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			kf := DetectSecrets(k)
			child := path + "[#" + strconv.Itoa(i) + "]"
			if len(kf) > 0 {
				out = appendField(out, child, kf)
			} else if plainKey(k) {
				child = path + "." + k
			}
			out = metadataSecrets(out, child, v[k], depth+1)
		}
	case []any:
		if depth >= maxMetadataDepth {
			return metadataJSON(out, path, v)
		}
		for i, x := range v {
			out = metadataSecrets(out, path+"["+strconv.Itoa(i)+"]", x, depth+1)
		}
	case []string:
		for i, x := range v {
			out = appendField(out, path+"["+strconv.Itoa(i)+"]", DetectSecrets(x))
		}
	case map[string]string:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = x
		}
		out = metadataSecrets(out, path, m, depth)
	default:
		// Any other Go value a library caller put in: scan its JSON form.
		out = metadataJSON(out, path, v)
	}
	return out
}

func metadataJSON(out []Finding, path string, v any) []Finding {
	b, err := json.Marshal(v)
	if err != nil {
		return out
	}
	return appendField(out, path, DetectSecrets(string(b)))
}

// plainKey reports a key safe to show in a field path.
func plainKey(k string) bool {
	if k == "" || len(k) > 64 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if !isWordByte(k[i]) && k[i] != '-' {
			return false
		}
	}
	return true
}
