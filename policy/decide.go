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
// detection, then instruction detection, each over every free-text field
// of the memory: content, reason, the agent and conversation identifiers,
// and every metadata key and value (numbers only for secrets). Each field
// is normalized once for both detectors. A finding names its field
// (Finding.Field); a reject's error names the field of its first finding.
// The strictest action wins; a reject stops the gate at once.
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
	fields := memoryFields(m)
	var findings, secrets []Finding
	for i := range fields {
		f := &fields[i]
		f.norm = normalize(f.text)
		if !f.scanned {
			f.secrets = detectSecrets(f.norm)
		}
		secrets = appendField(secrets, f.path, f.secrets)
	}
	if len(secrets) == 0 {
		secrets = splitSecrets(fields)
	}
	findings = append(findings, secrets...)
	if len(secrets) > 0 {
		a := c.SecretAction(m.Source)
		if a.rank() >= ActionReject.rank() {
			return reject(ReasonContainsSecret, secrets, steps, findings)
		}
		steps = append(steps, step{ReasonContainsSecret, a, types(secrets)})
	}

	// 3. Instructions, in everything a model may read.
	var instr []Finding
	for i := range fields {
		switch f := &fields[i]; f.kind {
		case fieldNumber:
		case fieldIdent:
			instr = appendField(instr, f.path, DetectInstructions(identWords(f.text)))
		default:
			instr = appendField(instr, f.path, detectInstructions(f.norm))
		}
	}
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

// textField is one free-text field of a memory, as Decide scans it.
type textField struct {
	path string // Finding.Field: "content", "agent", "metadata.db.password" …
	text string
	kind fieldKind
	// scanned is set when secrets already holds the field's secret
	// findings (a metadata key, whose path depends on them).
	scanned bool
	secrets []Finding
	norm    normalized
}

type fieldKind uint8

const (
	fieldText   fieldKind = iota // prose: content, reason, metadata strings and keys
	fieldIdent                   // an identifier: [A-Za-z0-9._:@-], no spaces
	fieldNumber                  // a metadata number, scanned for secrets only
)

// memoryFields lists the non-empty free-text fields of m in the order
// their findings are reported: content, reason, agent, conversation, then
// metadata in sorted key order.
func memoryFields(m *memgate.Memory) []textField {
	fields := make([]textField, 0, 4)
	add := func(path, text string, kind fieldKind) {
		if text != "" {
			fields = append(fields, textField{path: path, text: text, kind: kind})
		}
	}
	add("content", m.Content, fieldText)
	add("reason", m.Reason, fieldText)
	add("agent", m.Agent, fieldIdent)
	add("conversation", m.Conversation, fieldIdent)
	if len(m.Metadata) > 0 {
		fields = metadataFields(fields, "metadata", m.Metadata, 0)
	}
	return fields
}

// identWords reads an identifier's separators as spaces, so that
// "ignore-all-previous-instructions" is read as words while
// "system:scheduler" (no line starts with "system:") is not a role tag.
// Offsets are unchanged.
func identWords(id string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '.', '_', ':', '-', '@':
			return ' '
		}
		return r
	}, id)
}

// maxMetadataDepth bounds the walk; deeper values are scanned as JSON text.
const maxMetadataDepth = 32

// metadataFields walks a metadata value. A field's path is the path of the
// value; an object key appears in the path only when it is a plain
// identifier in which no secret was found, otherwise as [#n], its position
// in sorted key order, so a secret used as a key is never echoed. The key
// itself is a field with the path [#n].
func metadataFields(out []textField, path string, v any, depth int) []textField {
	num := func(s string) []textField { return append(out, textField{path: path, text: s, kind: fieldNumber}) }
	switch v := v.(type) {
	case nil, bool:
	case string:
		if v != "" {
			out = append(out, textField{path: path, text: v})
		}
	case json.Number:
		out = num(string(v))
	case float64:
		out = num(strconv.FormatFloat(v, 'f', -1, 64))
	case float32:
		out = num(strconv.FormatFloat(float64(v), 'f', -1, 32))
	case int:
		out = num(strconv.Itoa(v))
	case int64:
		out = num(strconv.FormatInt(v, 10))
	case uint64:
		out = num(strconv.FormatUint(v, 10))
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
			out = append(out, textField{path: child, text: k, scanned: true, secrets: kf})
			if len(kf) == 0 && plainKey(k) {
				child = path + "." + k
			}
			out = metadataFields(out, child, v[k], depth+1)
		}
	case []any:
		if depth >= maxMetadataDepth {
			return metadataJSON(out, path, v)
		}
		for i, x := range v {
			out = metadataFields(out, path+"["+strconv.Itoa(i)+"]", x, depth+1)
		}
	case []string:
		for i, x := range v {
			out = metadataFields(out, path+"["+strconv.Itoa(i)+"]", x, depth+1)
		}
	case map[string]string:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = x
		}
		out = metadataFields(out, path, m, depth)
	default:
		// Any other Go value a library caller put in: scan its JSON form.
		out = metadataJSON(out, path, v)
	}
	return out
}

func metadataJSON(out []textField, path string, v any) []textField {
	b, err := json.Marshal(v)
	if err != nil {
		return out
	}
	return append(out, textField{path: path, text: string(b)})
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

// splitSecrets finds a secret split between the free-text fields the gate
// sees, or between words of one field ("first half AKIAZ7QX3M", reason
// "second half M4RK…"; "mgk_ab… and then cd…"): the content and the reason
// read as one text, and every two consecutive key-like fragments (runs of
// 4 or more letters, digits and _-+/ holding a digit or an underscore)
// joined. A finding names the field of its first fragment, or
// "content+reason" when it spans both; its offsets are those of the
// fragments in that field.
func splitSecrets(fields []textField) []Finding {
	var content, reason string
	type frag struct {
		field      int
		start, end int
	}
	var frags []frag
	const maxFrags = 32
	for fi := range fields {
		f := &fields[fi]
		switch f.path {
		case "content":
			content = f.text
		case "reason":
			reason = f.text
		}
		if f.kind != fieldText || len(frags) >= maxFrags {
			continue
		}
		t := f.text
		for i := 0; i < len(t) && len(frags) < maxFrags; {
			if !fragByte(t[i]) {
				i++
				continue
			}
			j := i
			key := false
			for j < len(t) && fragByte(t[j]) {
				if isDigit(t[j]) || t[j] == '_' {
					key = true
				}
				j++
			}
			if key && j-i >= 4 && j-i <= 96 {
				frags = append(frags, frag{fi, i, j})
			}
			i = j
		}
	}
	var out []Finding
	if content != "" && reason != "" {
		joined := content + reason
		for _, f := range DetectSecrets(joined) {
			if f.Start < len(content) && f.End > len(content) {
				return []Finding{{Type: f.Type, Field: "content+reason", Start: f.Start, End: f.End}}
			}
		}
	}
	for k := 0; k+1 < len(frags); k++ {
		a, b := frags[k], frags[k+1]
		ta, tb := fields[a.field].text[a.start:a.end], fields[b.field].text[b.start:b.end]
		hs := scanSecrets(ta+tb, nil)
		for _, h := range hs {
			if h.Start < len(ta) && h.End > len(ta) {
				f := Finding{Type: h.Type, Field: fields[a.field].path, Start: a.start, End: b.end}
				if a.field != b.field {
					f.Field, f.End = fields[a.field].path+"+"+fields[b.field].path, a.end
				}
				out = append(out, f)
				break
			}
		}
		if len(out) > 0 {
			break
		}
	}
	return out
}

func fragByte(c byte) bool { return isAlnum(c) || c == '_' || c == '-' || c == '+' || c == '/' }
