package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/memgate/memgate"
)

// Action is what the write gate does with a memory, or with a finding.
type Action string

const (
	// ActionAllow stores the memory active; for a finding, ignores it.
	ActionAllow Action = "allow"
	// ActionFlag stores the memory as the other rules say and records the
	// finding's reason code in Decision.Flags. Finding actions only.
	ActionFlag Action = "flag"
	// ActionPending stores the memory pending: held back from recall until
	// someone approves it.
	ActionPending Action = "pending"
	// ActionReject refuses the memory with a policy_violation error.
	ActionReject Action = "reject"
)

// rank orders actions by strictness; the strictest applicable one wins.
func (a Action) rank() int {
	switch a {
	case ActionAllow:
		return 0
	case ActionFlag:
		return 1
	case ActionPending:
		return 2
	}
	return 3 // reject, and anything unknown: fail closed
}

// Default retention caps and times to live. See Default for the reasons.
const (
	DefaultMessageTTL       = 30 * 24 * time.Hour
	DefaultTaskTTL          = 7 * 24 * time.Hour
	DefaultMessageRetention = 10000
	DefaultTaskRetention    = 1000
	DefaultSummaryRetention = 1000
)

// Upper bounds Validate enforces on limits: the gate scans everything it is
// given, and an embedder is paid per token.
const (
	MaxContentBytesLimit  = 1 << 20
	MaxMetadataBytesLimit = 1 << 20
	MaxReasonBytesLimit   = 64 << 10
	maxTTL                = 200 * 365 * 24 * time.Hour
)

// Config is the write policy. The zero value, and any Config with missing
// map entries, means the defaults: every accessor falls back to Default for
// an entry that is not set, so a Config only needs what it changes.
// WithDefaults makes that explicit by filling every entry.
//
// A Config is a value; Decide and the accessors only read it and are safe
// for concurrent use as long as nobody mutates its maps.
type Config struct {
	// Write is the action per source and kind: allow, pending or reject.
	Write map[memgate.Source]map[memgate.Kind]Action

	// TTL is the time to live given to a memory of each kind when the caller
	// sets neither a ttl nor expires_at. Zero means no expiry.
	TTL map[memgate.Kind]time.Duration

	// Limits bounds content, metadata and reason sizes; zero fields take
	// memgate's defaults.
	Limits memgate.Limits

	// Retention caps the number of active+pending memories per population
	// (tenant, principal, agent, kind, source): one writer class's share.
	// When a write would exceed it, the oldest memories of that same
	// population are evicted, so a write never evicts another source's
	// memories. Zero means unlimited.
	Retention map[memgate.Kind]int

	// Secret is the action on a secret finding, per source: allow (ignore),
	// flag, pending or reject.
	Secret map[memgate.Source]Action

	// Instruction is the action on an instruction-like finding, per source.
	Instruction map[memgate.Source]Action

	// DisableDedup turns off folding of duplicate content into the existing
	// active memory. Dedup is on by default (the zero value).
	DisableDedup bool

	// RevokeAnySource lets a key that may not delete memories (an agent
	// key) revoke one of a source it may not claim, such as what the
	// person said (source user). Off by default (the zero value): revoking
	// retires a memory as superseding does, so it takes the same rule, and
	// a prompt-injected model cannot retire the person's statements. Keys
	// that may delete a memory (user, admin) may always revoke it.
	RevokeAnySource bool
}

// Default returns the policy a careful operator would start from.
//
//   - Write: see the package documentation. Unverified writers (assistant,
//     tool) may record messages, tasks and summaries; their facts and
//     preferences wait for approval.
//   - TTL: message 30 days (a conversation turn is context, not knowledge),
//     task 7 days (task state goes stale within days). No expiry for fact
//     and preference: they are the knowledge memory exists to keep, and they
//     leave by revocation or supersession. No expiry for summary either: a
//     summary is what remains of messages after they expire, so it must
//     outlive them.
//   - Retention: message 10000 and task 1000 bound a runaway writer;
//     summary 1000 because summaries accumulate one per conversation and the
//     oldest matter least. Facts and preferences are unlimited: evicting
//     one silently loses knowledge someone approved, and their writers are
//     already gated.
//   - Secrets are rejected from every source; instruction-like content is
//     flagged from user and system and held pending from everyone else.
//   - Dedup on.
func Default() Config {
	return Config{
		Write:       defaultWrite(),
		TTL:         defaultTTL(),
		Limits:      memgate.Limits{}.WithDefaults(),
		Retention:   defaultRetention(),
		Secret:      defaultSecret(),
		Instruction: defaultInstruction(),
	}
}

func defaultWrite() map[memgate.Source]map[memgate.Kind]Action {
	w := make(map[memgate.Source]map[memgate.Kind]Action, len(memgate.Sources))
	for _, s := range memgate.Sources {
		row := make(map[memgate.Kind]Action, len(memgate.Kinds))
		for _, k := range memgate.Kinds {
			row[k] = ActionAllow
		}
		w[s] = row
	}
	for _, s := range []memgate.Source{memgate.SourceAssistant, memgate.SourceTool} {
		w[s][memgate.KindFact] = ActionPending
		w[s][memgate.KindPreference] = ActionPending
	}
	return w
}

func defaultTTL() map[memgate.Kind]time.Duration {
	return map[memgate.Kind]time.Duration{
		memgate.KindMessage:    DefaultMessageTTL,
		memgate.KindTask:       DefaultTaskTTL,
		memgate.KindFact:       0,
		memgate.KindPreference: 0,
		memgate.KindSummary:    0,
	}
}

func defaultRetention() map[memgate.Kind]int {
	return map[memgate.Kind]int{
		memgate.KindMessage:    DefaultMessageRetention,
		memgate.KindTask:       DefaultTaskRetention,
		memgate.KindFact:       0,
		memgate.KindPreference: 0,
		memgate.KindSummary:    DefaultSummaryRetention,
	}
}

func defaultSecret() map[memgate.Source]Action {
	m := make(map[memgate.Source]Action, len(memgate.Sources))
	for _, s := range memgate.Sources {
		m[s] = ActionReject
	}
	return m
}

func defaultInstruction() map[memgate.Source]Action {
	m := make(map[memgate.Source]Action, len(memgate.Sources))
	for _, s := range memgate.Sources {
		m[s] = ActionPending
	}
	m[memgate.SourceUser] = ActionFlag
	m[memgate.SourceSystem] = ActionFlag
	return m
}

// builtin is the default policy the accessors fall back to. It is never
// handed out (Default builds fresh maps), so nobody can mutate it.
var builtin = Default()

// WithDefaults returns a copy of c with every missing map entry and every
// zero limit set to its default. It never modifies c's maps.
func (c Config) WithDefaults() Config {
	out := Config{
		Write:        make(map[memgate.Source]map[memgate.Kind]Action, len(memgate.Sources)),
		TTL:          maps.Clone(builtin.TTL),
		Limits:       c.Limits.WithDefaults(),
		Retention:    maps.Clone(builtin.Retention),
		Secret:       maps.Clone(builtin.Secret),
		Instruction:  maps.Clone(builtin.Instruction),
		DisableDedup: c.DisableDedup,

		RevokeAnySource: c.RevokeAnySource,
	}
	for s, row := range builtin.Write {
		out.Write[s] = maps.Clone(row)
	}
	for s, row := range c.Write {
		if out.Write[s] == nil {
			out.Write[s] = make(map[memgate.Kind]Action, len(row))
		}
		maps.Copy(out.Write[s], row)
	}
	maps.Copy(out.TTL, c.TTL)
	maps.Copy(out.Retention, c.Retention)
	maps.Copy(out.Secret, c.Secret)
	maps.Copy(out.Instruction, c.Instruction)
	return out
}

// Validate reports the first setting that cannot work, as an
// invalid_argument error whose field is the setting's path in the policy
// file (for example "write.assistant.fact" or "limits.max_content_bytes").
// Missing entries are fine: they take the defaults.
func (c Config) Validate() error {
	for _, s := range sortedKeys(c.Write) {
		if !knownSource(s) {
			return memgate.FieldError("write."+clip(string(s)), "unknown source (one of %s)", sourceList())
		}
		row := c.Write[s]
		for _, k := range sortedKeys(row) {
			field := "write." + string(s) + "." + clip(string(k))
			if !knownKind(k) {
				return memgate.FieldError(field, "unknown kind (one of %s)", kindList())
			}
			switch row[k] {
			case ActionAllow, ActionPending, ActionReject:
			default:
				return memgate.FieldError(field, "unknown action %q (one of allow, pending, reject)", clip(string(row[k])))
			}
		}
	}
	for _, k := range sortedKeys(c.TTL) {
		field := "ttl." + clip(string(k))
		if !knownKind(k) {
			return memgate.FieldError(field, "unknown kind (one of %s)", kindList())
		}
		if d := c.TTL[k]; d < 0 || d > maxTTL {
			return memgate.FieldError(field, "must be none or a positive duration of at most 200 years")
		}
	}
	for _, k := range sortedKeys(c.Retention) {
		field := "retention." + clip(string(k))
		if !knownKind(k) {
			return memgate.FieldError(field, "unknown kind (one of %s)", kindList())
		}
		if c.Retention[k] < 0 {
			return memgate.FieldError(field, "must be 0 (unlimited) or positive")
		}
	}
	for _, l := range []struct {
		field    string
		val, max int
	}{
		{"limits.max_content_bytes", c.Limits.MaxContentBytes, MaxContentBytesLimit},
		{"limits.max_metadata_bytes", c.Limits.MaxMetadataBytes, MaxMetadataBytesLimit},
		{"limits.max_reason_bytes", c.Limits.MaxReasonBytes, MaxReasonBytesLimit},
	} {
		if l.val < 0 || l.val > l.max {
			return memgate.FieldError(l.field, "must be 0 (default) or at most %d", l.max)
		}
	}
	for _, t := range []struct {
		name string
		m    map[memgate.Source]Action
	}{{"secret", c.Secret}, {"instruction", c.Instruction}} {
		for _, s := range sortedKeys(t.m) {
			field := "findings." + t.name + "." + clip(string(s))
			if !knownSource(s) {
				return memgate.FieldError(field, "unknown source (one of %s)", sourceList())
			}
			switch t.m[s] {
			case ActionAllow, ActionFlag, ActionPending, ActionReject:
			default:
				return memgate.FieldError(field, "unknown action %q (one of allow, flag, pending, reject)", clip(string(t.m[s])))
			}
		}
	}
	return nil
}

// WriteAction returns the action for a memory of kind k written by source s.
// An unknown source or kind is rejected: the table fails closed.
func (c Config) WriteAction(s memgate.Source, k memgate.Kind) Action {
	if a, ok := c.Write[s][k]; ok {
		return a
	}
	if a, ok := builtin.Write[s][k]; ok {
		return a
	}
	return ActionReject
}

// DefaultTTL returns the time to live for a memory of kind k whose writer
// set neither ttl nor expires_at; zero means it does not expire.
func (c Config) DefaultTTL(k memgate.Kind) time.Duration {
	if d, ok := c.TTL[k]; ok {
		return d
	}
	return builtin.TTL[k]
}

// RetentionCap returns the maximum number of active+pending memories of kind
// k per (tenant, principal); zero means unlimited.
func (c Config) RetentionCap(k memgate.Kind) int {
	if n, ok := c.Retention[k]; ok {
		return n
	}
	return builtin.Retention[k]
}

// SecretAction returns the action on a secret found in a memory from s.
// An unknown source is rejected.
func (c Config) SecretAction(s memgate.Source) Action {
	if a, ok := c.Secret[s]; ok {
		return a
	}
	if a, ok := builtin.Secret[s]; ok {
		return a
	}
	return ActionReject
}

// InstructionAction returns the action on instruction-like content in a
// memory from s. An unknown source is held pending.
func (c Config) InstructionAction(s memgate.Source) Action {
	if a, ok := c.Instruction[s]; ok {
		return a
	}
	if a, ok := builtin.Instruction[s]; ok {
		return a
	}
	return ActionPending
}

// Dedup reports whether duplicate content folds into the existing memory.
func (c Config) Dedup() bool { return !c.DisableDedup }

// RevokeNeedsClaim reports whether a key that may not delete memories may
// revoke only those of a source it may claim (the default).
func (c Config) RevokeNeedsClaim() bool { return !c.RevokeAnySource }

// Load reads a policy file: a JSON object with the fields it changes, the
// rest keeping their defaults. Unknown fields, sources, kinds and actions
// are refused by name. The result has defaults applied and is validated.
//
//	{
//	  "write":     {"tool": {"task": "pending"}, "assistant": {"*": "pending"}},
//	  "ttl":       {"message": "14d", "task": "48h", "fact": "none"},
//	  "limits":    {"max_content_bytes": 4096},
//	  "retention": {"message": 5000, "fact": 0},
//	  "findings":  {"secret": "reject", "instruction": {"verified_tool": "flag"}},
//	  "dedup":     true,
//	  "revoke":    {"any_source": false}
//	}
//
// "*" as a source or kind key sets every source or kind; named keys in the
// same object override it. A finding table may be a single action string
// for every source. A ttl is "none" or a duration such as "30d", "12h" or
// "90m"; a retention cap of 0 means unlimited; a zero limit means memgate's
// default. revoke.any_source true lets an agent key revoke memories of
// sources it may not claim (Config.RevokeAnySource).
func Load(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read policy file: %w", err)
	}
	c, err := Parse(b)
	if err != nil {
		return Config{}, fmt.Errorf("policy file %s: %w", path, err)
	}
	return c, nil
}

// Parse is Load for a policy held in memory.
func Parse(data []byte) (Config, error) {
	var f fileConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return Config{}, memgate.FieldError("policy", "is empty (an empty policy is {})")
		}
		return Config{}, memgate.FieldError("policy", "%s", jsonError(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Config{}, memgate.FieldError("policy", "has data after the JSON object")
	}
	c := Default()
	if err := f.apply(&c); err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	c.Limits = c.Limits.WithDefaults() // after Validate, so a negative is refused, not defaulted
	return c, nil
}

// jsonError turns a decoding error into a message that names the field,
// without the decoder's Go type names.
func jsonError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("field %s: wrong type (got JSON %s)", te.Field, te.Value)
		}
		return fmt.Sprintf("wrong type (got JSON %s)", te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("is not valid JSON at byte %d: %s", se.Offset, se.Error())
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "json: ")
	return msg // "unknown field \"name\"", already naming the field
}

// fileConfig is the policy file's shape. Keys are strings so that a typo is
// reported by name with its path, and pointers tell "absent" from zero.
type fileConfig struct {
	Write     map[string]map[string]string `json:"write"`
	TTL       map[string]string            `json:"ttl"`
	Limits    *fileLimits                  `json:"limits"`
	Retention map[string]int               `json:"retention"`
	Findings  *fileFindings                `json:"findings"`
	Dedup     *bool                        `json:"dedup"`
	Revoke    *fileRevoke                  `json:"revoke,omitempty"`
}

type fileRevoke struct {
	AnySource *bool `json:"any_source"`
}

type fileLimits struct {
	MaxContentBytes  *int `json:"max_content_bytes"`
	MaxMetadataBytes *int `json:"max_metadata_bytes"`
	MaxReasonBytes   *int `json:"max_reason_bytes"`
}

type fileFindings struct {
	Secret      sourceActions `json:"secret"`
	Instruction sourceActions `json:"instruction"`
}

// sourceActions is a per-source action table that may also be written as a
// single action for every source.
type sourceActions map[string]string

func (s *sourceActions) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = sourceActions{"*": one}
		return nil
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return errors.New("must be an action or an object of actions by source")
	}
	*s = m
	return nil
}

func (f *fileConfig) apply(c *Config) error {
	for _, src := range wildcardFirst(f.Write) {
		srcs, err := expandSources("write", src)
		if err != nil {
			return err
		}
		row := f.Write[src]
		for _, kind := range wildcardFirst(row) {
			kinds, err := expandKinds("write."+clip(src), kind)
			if err != nil {
				return err
			}
			for _, s := range srcs {
				for _, k := range kinds {
					c.Write[s][k] = Action(row[kind])
				}
			}
		}
	}
	for _, kind := range wildcardFirst(f.TTL) {
		kinds, err := expandKinds("ttl", kind)
		if err != nil {
			return err
		}
		d, err := parseTTL(f.TTL[kind])
		if err != nil {
			return memgate.FieldError("ttl."+clip(kind), "%s", err)
		}
		for _, k := range kinds {
			c.TTL[k] = d
		}
	}
	for _, kind := range wildcardFirst(f.Retention) {
		kinds, err := expandKinds("retention", kind)
		if err != nil {
			return err
		}
		for _, k := range kinds {
			c.Retention[k] = f.Retention[kind]
		}
	}
	if l := f.Limits; l != nil {
		if l.MaxContentBytes != nil {
			c.Limits.MaxContentBytes = *l.MaxContentBytes
		}
		if l.MaxMetadataBytes != nil {
			c.Limits.MaxMetadataBytes = *l.MaxMetadataBytes
		}
		if l.MaxReasonBytes != nil {
			c.Limits.MaxReasonBytes = *l.MaxReasonBytes
		}
	}
	if fd := f.Findings; fd != nil {
		for _, t := range []struct {
			name string
			in   sourceActions
			out  map[memgate.Source]Action
		}{{"secret", fd.Secret, c.Secret}, {"instruction", fd.Instruction, c.Instruction}} {
			for _, src := range wildcardFirst(t.in) {
				srcs, err := expandSources("findings."+t.name, src)
				if err != nil {
					return err
				}
				for _, s := range srcs {
					t.out[s] = Action(t.in[src])
				}
			}
		}
	}
	if f.Dedup != nil {
		c.DisableDedup = !*f.Dedup
	}
	if f.Revoke != nil && f.Revoke.AnySource != nil {
		c.RevokeAnySource = *f.Revoke.AnySource
	}
	return nil
}

// wildcardFirst returns m's keys sorted with "*" first, so that named keys
// override the wildcard whatever the map's order.
func wildcardFirst[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if (keys[i] == "*") != (keys[j] == "*") {
			return keys[i] == "*"
		}
		return keys[i] < keys[j]
	})
	return keys
}

func expandSources(path, key string) ([]memgate.Source, error) {
	if key == "*" {
		return memgate.Sources, nil
	}
	if !knownSource(memgate.Source(key)) {
		return nil, memgate.FieldError(path+"."+clip(key), "unknown source (one of %s, or *)", sourceList())
	}
	return []memgate.Source{memgate.Source(key)}, nil
}

func expandKinds(path, key string) ([]memgate.Kind, error) {
	if key == "*" {
		return memgate.Kinds, nil
	}
	if !knownKind(memgate.Kind(key)) {
		return nil, memgate.FieldError(path+"."+clip(key), "unknown kind (one of %s, or *)", kindList())
	}
	return []memgate.Kind{memgate.Kind(key)}, nil
}

// parseTTL reads a policy ttl: "none" or "0" for no expiry, else a positive
// duration as memgate.ParseTTL accepts ("30d", "12h", "90m").
func parseTTL(s string) (time.Duration, error) {
	switch strings.TrimSpace(s) {
	case "none", "0":
		return 0, nil
	}
	d, err := memgate.ParseTTL(s)
	if err != nil {
		return 0, errors.New("must be none or a positive duration such as 30d, 12h or 90m")
	}
	return d, nil
}

// formatTTL is the inverse of parseTTL.
func formatTTL(d time.Duration) string {
	switch {
	case d == 0:
		return "none"
	case d%(24*time.Hour) == 0:
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return d.String()
}

// MarshalJSON writes c, with defaults applied, in the policy file format:
// Parse of the result gives back the same policy.
func (c Config) MarshalJSON() ([]byte, error) {
	c = c.WithDefaults()
	dedup := !c.DisableDedup
	f := fileConfig{
		Write:     map[string]map[string]string{},
		TTL:       map[string]string{},
		Retention: map[string]int{},
		Limits: &fileLimits{
			MaxContentBytes:  &c.Limits.MaxContentBytes,
			MaxMetadataBytes: &c.Limits.MaxMetadataBytes,
			MaxReasonBytes:   &c.Limits.MaxReasonBytes,
		},
		Findings: &fileFindings{Secret: sourceActions{}, Instruction: sourceActions{}},
		Dedup:    &dedup,
		Revoke:   &fileRevoke{AnySource: &c.RevokeAnySource},
	}
	for s, row := range c.Write {
		r := map[string]string{}
		for k, a := range row {
			r[string(k)] = string(a)
		}
		f.Write[string(s)] = r
	}
	for k, d := range c.TTL {
		f.TTL[string(k)] = formatTTL(d)
	}
	for k, n := range c.Retention {
		f.Retention[string(k)] = n
	}
	for s, a := range c.Secret {
		f.Findings.Secret[string(s)] = string(a)
	}
	for s, a := range c.Instruction {
		f.Findings.Instruction[string(s)] = string(a)
	}
	return json.Marshal(f)
}

// UnmarshalJSON reads the policy file format, as Parse does: the result is
// the default policy with the document's changes, validated. It lets a
// Config sit inside a larger JSON configuration.
func (c *Config) UnmarshalJSON(b []byte) error {
	parsed, err := Parse(b)
	if err != nil {
		return err
	}
	*c = parsed
	return nil
}

func knownSource(s memgate.Source) bool {
	for _, x := range memgate.Sources {
		if x == s {
			return true
		}
	}
	return false
}

func knownKind(k memgate.Kind) bool {
	for _, x := range memgate.Kinds {
		if x == k {
			return true
		}
	}
	return false
}

func sourceList() string {
	names := make([]string, len(memgate.Sources))
	for i, s := range memgate.Sources {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

func kindList() string {
	names := make([]string, len(memgate.Kinds))
	for i, k := range memgate.Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

// clip shortens an operator-supplied name for an error message and makes it
// printable, so a huge or hostile key is not echoed whole.
func clip(s string) string {
	if len(s) > 32 {
		s = s[:32] + "…"
	}
	s = strings.ToValidUTF8(s, "?")
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || isInvisible(r) {
			return '?'
		}
		return r
	}, s)
}
