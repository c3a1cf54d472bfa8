package memgate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kind says what a memory is.
type Kind string

const (
	KindMessage    Kind = "message"    // a conversation turn
	KindFact       Kind = "fact"       // something true about the principal or the world
	KindPreference Kind = "preference" // how the principal likes things done
	KindTask       Kind = "task"       // current-task or workflow state
	KindSummary    Kind = "summary"    // a condensed account of other memories
)

// Kinds lists every kind, in documentation order.
var Kinds = []Kind{KindMessage, KindFact, KindPreference, KindTask, KindSummary}

// Source says who asserted a memory.
type Source string

const (
	SourceUser         Source = "user"
	SourceAssistant    Source = "assistant"
	SourceTool         Source = "tool"
	SourceVerifiedTool Source = "verified_tool"
	SourceSystem       Source = "system"
	SourceImport       Source = "import"
)

// Sources lists every source.
var Sources = []Source{SourceUser, SourceAssistant, SourceTool, SourceVerifiedTool, SourceSystem, SourceImport}

// Sensitivity decides whether recall may return a memory by default.
type Sensitivity string

const (
	SensitivityStandard   Sensitivity = "standard"
	SensitivityRestricted Sensitivity = "restricted" // left out of recall unless asked for and allowed
)

// Sensitivities lists every sensitivity.
var Sensitivities = []Sensitivity{SensitivityStandard, SensitivityRestricted}

// Status is the stored lifecycle state. "Expired" is not a status: it is
// derived from ExpiresAt at read time (see Memory.ExpiredAt).
type Status string

const (
	StatusActive     Status = "active"
	StatusPending    Status = "pending" // held back by the write gate until approved
	StatusRevoked    Status = "revoked"
	StatusSuperseded Status = "superseded"
)

// Statuses lists every stored status.
var Statuses = []Status{StatusActive, StatusPending, StatusRevoked, StatusSuperseded}

// StatusExpired is accepted by list filters only: active memories whose
// expires_at has passed at read time.
const StatusExpired Status = "expired"

// Defaults for Limits.
const (
	DefaultMaxContentBytes  = 8 << 10
	DefaultMaxMetadataBytes = 4 << 10
	DefaultMaxReasonBytes   = 1 << 10
	MaxIDLength             = 128
)

// Limits bounds the size of what may be stored.
type Limits struct {
	MaxContentBytes  int // default DefaultMaxContentBytes
	MaxMetadataBytes int // serialized JSON; default DefaultMaxMetadataBytes
	MaxReasonBytes   int // default DefaultMaxReasonBytes
}

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	if l.MaxContentBytes <= 0 {
		l.MaxContentBytes = DefaultMaxContentBytes
	}
	if l.MaxMetadataBytes <= 0 {
		l.MaxMetadataBytes = DefaultMaxMetadataBytes
	}
	if l.MaxReasonBytes <= 0 {
		l.MaxReasonBytes = DefaultMaxReasonBytes
	}
	return l
}

// Embedding is what an embedder produced for one text. Provider, Model and
// Dim are the provenance stored with the memory: they come from the producer
// of the vector, never from configuration. Vector is kept out of JSON.
type Embedding struct {
	Provider string    `json:"provider"`
	Model    string    `json:"model"`
	Dim      int       `json:"dim"`
	Vector   []float32 `json:"-"`
}

// Memory is one remembered item with its owner, receipt and lifecycle.
//
// Times are UTC with microsecond precision (what every backend keeps).
type Memory struct {
	ID           string `json:"id"`
	Tenant       string `json:"tenant"`
	Principal    string `json:"principal"`
	Agent        string `json:"agent,omitempty"`
	Conversation string `json:"conversation,omitempty"`

	Kind         Kind        `json:"kind"`
	Source       Source      `json:"source"`
	Sensitivity  Sensitivity `json:"sensitivity"`
	Status       Status      `json:"status"`
	StatusReason string      `json:"status_reason,omitempty"` // why the status last changed (revoke reason, pending reason)

	Content  string         `json:"content"`
	Reason   string         `json:"reason,omitempty"` // why it was remembered
	Metadata map[string]any `json:"metadata,omitempty"`

	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	ValidFrom  *time.Time `json:"valid_from,omitempty"`
	ValidUntil *time.Time `json:"valid_until,omitempty"`

	Version int64 `json:"version"`
	// Key is the caller's own name for the memory (e.g. "pref:coffee"),
	// unique among the active memories of its key space (tenant,
	// principal, agent, conversation, source): remembering a key that is
	// there supersedes the memory of the same source that has it (one
	// chain, never an overwrite), never one of another source (an agent's
	// write of a person's key is a memory of its own). Empty: no key. See
	// CheckMemoryKey.
	Key          string `json:"key,omitempty"`
	Supersedes   string `json:"supersedes,omitempty"`
	SupersededBy string `json:"superseded_by,omitempty"`

	Embedding     *Embedding `json:"embedding,omitempty"`
	ContentSHA256 string     `json:"content_sha256"`

	// DedupKey is the write gate's signature of the normalized content:
	// a memory with the same key, scope and kind folds into the existing
	// one. Set by the engine; empty disables dedup for this memory.
	DedupKey string `json:"-"`
	// KeyHidesRestricted is set by the engine on a write by a writer that
	// may not read restricted memories (an agent key): a restricted memory
	// holding the write's key in its key space is then neither replaced
	// nor named, and the write is a conflict (store.ErrKeyHeld). Never
	// stored.
	KeyHidesRestricted bool `json:"-"`
	// SeenCount is how many times this memory was remembered (1 + the
	// duplicates folded into it).
	SeenCount int64 `json:"seen_count"`
	// Flags are the write gate's findings on an admitted memory (e.g.
	// "instruction_like:role_tag" from a trusted source).
	Flags []string `json:"flags,omitempty"`
	// Feedback is the usefulness reported by callers.
	Feedback Feedback `json:"feedback"`

	// CreatedBy is who wrote the memory and UpdatedBy who last changed it
	// (its content, fields or status): the id of an API key (never a
	// secret), or "cli" for the local command line, which uses no key;
	// empty for memories written before memgate recorded them, or by a
	// library caller that names no actor (engine.WithActor).
	CreatedBy string `json:"created_by,omitempty"`
	UpdatedBy string `json:"updated_by,omitempty"`

	// ImportedStatus, ImportedCreatedBy and ImportedUpdatedBy are what the
	// import file said of the memory (its line's status, created_by and
	// updated_by), kept as a receipt: an import stores a memory with the
	// status the write gate gives it and the importing key as its writer,
	// never the file's word for either (Engine.Import). Empty for a
	// memory that was not imported, or whose line said nothing. They never
	// change after the import.
	ImportedStatus    Status `json:"imported_status,omitempty"`
	ImportedCreatedBy string `json:"imported_created_by,omitempty"`
	ImportedUpdatedBy string `json:"imported_updated_by,omitempty"`

	// Expired is derived at read time from ExpiresAt; it is never stored.
	Expired bool `json:"expired,omitempty"`
}

// Feedback aggregates usefulness reports, each in [-1, 1].
type Feedback struct {
	Count int64   `json:"count"`
	Sum   float64 `json:"sum"`
}

// Mean is the average usefulness, 0 without reports.
func (f Feedback) Mean() float64 {
	if f.Count == 0 {
		return 0
	}
	return f.Sum / float64(f.Count)
}

// MarshalJSON adds the mean to the receipt.
func (f Feedback) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Count int64   `json:"count"`
		Sum   float64 `json:"sum"`
		Mean  float64 `json:"mean"`
	}{f.Count, f.Sum, f.Mean()})
}

// UnmarshalJSON reads what MarshalJSON writes (the mean is derived).
func (f *Feedback) UnmarshalJSON(b []byte) error {
	var v struct {
		Count int64   `json:"count"`
		Sum   float64 `json:"sum"`
		Mean  float64 `json:"mean"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	f.Count, f.Sum = v.Count, v.Sum
	return nil
}

// ExpiredAt reports whether m has expired at t.
func (m *Memory) ExpiredAt(t time.Time) bool {
	return m.ExpiresAt != nil && !m.ExpiresAt.After(t)
}

// Scope returns the memory's owner as a Scope.
func (m *Memory) Scope() Scope {
	return Scope{Tenant: m.Tenant, Principal: m.Principal, Agent: m.Agent, Conversation: m.Conversation}
}

// Clone returns a deep copy of m.
func (m *Memory) Clone() *Memory {
	c := *m
	if m.Metadata != nil {
		b, _ := json.Marshal(m.Metadata)
		c.Metadata, _ = DecodeMetadata(b)
	}
	for _, p := range []**time.Time{&c.ExpiresAt, &c.ValidFrom, &c.ValidUntil} {
		if *p != nil {
			t := **p
			*p = &t
		}
	}
	if m.Embedding != nil {
		e := *m.Embedding
		e.Vector = append([]float32(nil), m.Embedding.Vector...)
		c.Embedding = &e
	}
	return &c
}

// ContentHash is the hex SHA-256 of content, as stored in ContentSHA256.
func ContentHash(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// DecodeMetadata parses a JSON object, keeping numbers exact.
func DecodeMetadata(b []byte) (map[string]any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, FieldError("metadata", "must be a JSON object")
	}
	if dec.More() {
		return nil, FieldError("metadata", "must be a single JSON object")
	}
	return m, nil
}

// ValidIdent reports whether s is a valid id, tenant, principal, agent or
// conversation: [A-Za-z0-9._:@-]{1,128}. A loop over the bytes, not a
// regular expression: every request checks several, a recall every id it
// reads and audits (2 % of a recall's CPU as a regexp).
func ValidIdent(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !identByte[s[i]] {
			return false
		}
	}
	return true
}

// identByte marks the bytes of an identifier, tokenByte those of a token.
var identByte, tokenByte = byteSet("._:@-"), byteSet("._:@#/+=-")

// byteSet is the set of ASCII letters, digits and the bytes of extra.
func byteSet(extra string) (set [256]bool) {
	for c := range 256 {
		set[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	for i := 0; i < len(extra); i++ {
		set[extra[i]] = true
	}
	return set
}

// CheckIdent validates a required identifier and names the field on error.
func CheckIdent(field, s string) error {
	if s == "" {
		return FieldError(field, "is required")
	}
	if !ValidIdent(s) {
		return FieldError(field, "must match [A-Za-z0-9._:@-]{1,128}")
	}
	return nil
}

// MaxIdempotencyKeyBytes bounds an idempotency key, MaxMemoryKeyBytes a
// memory's key (Memory.Key).
const (
	MaxIdempotencyKeyBytes = 160
	MaxMemoryKeyBytes      = 256
)

// tokenBytes are the characters of a caller's token: an idempotency key
// or a memory's key (tokenByte).
const tokenBytes = "[A-Za-z0-9._:@#/+=-]"

// checkToken validates a caller's token of 1 to max tokenBytes. The error
// names field and never quotes the token.
func checkToken(field, s string, max int) error {
	ok := len(s) > 0 && len(s) <= max
	for i := 0; ok && i < len(s); i++ {
		ok = tokenByte[s[i]]
	}
	if !ok {
		return FieldError(field, "must be 1 to %d characters of %s", max, tokenBytes)
	}
	return nil
}

// CheckIdempotencyKey validates a client's idempotency key (a UUID, a
// random token, a client id with a counter): 1 to MaxIdempotencyKeyBytes
// of [A-Za-z0-9._:@#/+=-].
func CheckIdempotencyKey(field, key string) error {
	return checkToken(field, key, MaxIdempotencyKeyBytes)
}

// CheckMemoryKey validates a memory's key: 1 to MaxMemoryKeyBytes of
// [A-Za-z0-9._:@#/+=-] (a namespace and a name joined by ':' or '/' fit;
// spaces and control characters do not).
func CheckMemoryKey(field, key string) error { return checkToken(field, key, MaxMemoryKeyBytes) }

// checkOptionalIdent validates an identifier that may be empty.
func checkOptionalIdent(field, s string) error {
	if s == "" {
		return nil
	}
	return CheckIdent(field, s)
}

// ParseKind returns the kind named s, or an error naming the field.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	if s == "" {
		return "", FieldError("kind", "is required (one of message, fact, preference, task, summary)")
	}
	return "", FieldError("kind", "unknown kind %q (one of message, fact, preference, task, summary)", clip(s))
}

// ParseSource returns the source named s, or an error naming the field.
func ParseSource(s string) (Source, error) {
	for _, k := range Sources {
		if string(k) == s {
			return k, nil
		}
	}
	if s == "" {
		return "", FieldError("source", "is required (one of user, assistant, tool, verified_tool, system, import)")
	}
	return "", FieldError("source", "unknown source %q (one of user, assistant, tool, verified_tool, system, import)", clip(s))
}

// ParseSensitivity returns the sensitivity named s ("" means standard).
func ParseSensitivity(s string) (Sensitivity, error) {
	switch Sensitivity(s) {
	case "", SensitivityStandard:
		return SensitivityStandard, nil
	case SensitivityRestricted:
		return SensitivityRestricted, nil
	}
	return "", FieldError("sensitivity", "unknown sensitivity %q (one of standard, restricted)", clip(s))
}

// ParseStatus returns the stored status named s.
func ParseStatus(s string) (Status, error) {
	for _, k := range Statuses {
		if string(k) == s {
			return k, nil
		}
	}
	return "", FieldError("status", "unknown status %q (one of active, pending, revoked, superseded)", clip(s))
}

// clip shortens a caller-supplied name for an error message, so a huge or
// hostile value is not echoed whole.
func clip(s string) string {
	if len(s) > 32 {
		s = s[:32] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// CheckContent validates memory content: valid UTF-8, no NUL, not blank, at
// most max bytes. It measures the content itself, not any envelope.
func CheckContent(content string, max int) error {
	switch {
	case !utf8.ValidString(content):
		return FieldError("content", "must be valid UTF-8")
	case strings.IndexByte(content, 0) >= 0:
		return FieldError("content", "must not contain NUL bytes")
	case strings.TrimFunc(content, unicode.IsSpace) == "":
		return FieldError("content", "must not be blank")
	case len(content) > max:
		return &Error{Code: ETOOLARGE, Field: "content", Message: "is " + itoa(len(content)) + " bytes, the limit is " + itoa(max)}
	}
	return nil
}

// CheckMetadata validates a metadata object: at most max bytes serialized,
// keys non-empty valid UTF-8, values finite.
func CheckMetadata(md map[string]any, max int) error {
	if md == nil {
		return nil
	}
	b, err := json.Marshal(md)
	if err != nil {
		return FieldError("metadata", "must be serializable as JSON (finite numbers, strings, arrays, objects)")
	}
	if len(b) > max {
		return &Error{Code: ETOOLARGE, Field: "metadata", Message: "is " + itoa(len(b)) + " bytes of JSON, the limit is " + itoa(max)}
	}
	for k, v := range md {
		if k == "" || !utf8.ValidString(k) || strings.IndexByte(k, 0) >= 0 {
			return FieldError("metadata", "keys must be non-empty UTF-8 without NUL")
		}
		if err := checkMetadataValue(v); err != nil {
			return err
		}
	}
	return nil
}

// checkMetadataValue holds nested values to the rules of the top level:
// strings and keys without NUL (which PostgreSQL's jsonb cannot hold, so
// every backend refuses it alike), numbers finite (a json.Number such as
// 1e999 serializes, but no float64 reader can decode it back).
func checkMetadataValue(v any) error {
	switch v := v.(type) {
	case string:
		if strings.IndexByte(v, 0) >= 0 {
			return FieldError("metadata", "strings must not contain NUL bytes")
		}
	case json.Number:
		if f, err := strconv.ParseFloat(string(v), 64); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return FieldError("metadata", "numbers must be finite")
		}
	case []any:
		for _, e := range v {
			if err := checkMetadataValue(e); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, e := range v {
			if k == "" || !utf8.ValidString(k) || strings.IndexByte(k, 0) >= 0 {
				return FieldError("metadata", "keys must be non-empty UTF-8 without NUL")
			}
			if err := checkMetadataValue(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckText validates free text: valid UTF-8, no NUL, at most max bytes.
func CheckText(field, s string, max int) error {
	switch {
	case !utf8.ValidString(s):
		return FieldError(field, "must be valid UTF-8")
	case strings.IndexByte(s, 0) >= 0:
		return FieldError(field, "must not contain NUL bytes")
	case len(s) > max:
		return &Error{Code: ETOOLARGE, Field: field, Message: "is " + itoa(len(s)) + " bytes, the limit is " + itoa(max)}
	}
	return nil
}

// Validate checks every field of m against the vocabulary and l. It does
// not check fields the store assigns (timestamps, version) beyond their
// consistency. The first problem found is returned, naming its field.
func (m *Memory) Validate(l Limits) error {
	l = l.WithDefaults()
	if m.ID != "" {
		if err := CheckIdent("id", m.ID); err != nil {
			return err
		}
	}
	if err := CheckIdent("tenant", m.Tenant); err != nil {
		return err
	}
	if err := CheckIdent("principal", m.Principal); err != nil {
		return err
	}
	if err := checkOptionalIdent("agent", m.Agent); err != nil {
		return err
	}
	if err := checkOptionalIdent("conversation", m.Conversation); err != nil {
		return err
	}
	if err := checkOptionalIdent("created_by", m.CreatedBy); err != nil {
		return err
	}
	if err := checkOptionalIdent("updated_by", m.UpdatedBy); err != nil {
		return err
	}
	if err := checkOptionalIdent("imported_created_by", m.ImportedCreatedBy); err != nil {
		return err
	}
	if err := checkOptionalIdent("imported_updated_by", m.ImportedUpdatedBy); err != nil {
		return err
	}
	if m.ImportedStatus != "" {
		if _, err := ParseStatus(string(m.ImportedStatus)); err != nil {
			return FieldError("imported_status", "%s", ErrorMessage(err))
		}
	}
	if _, err := ParseKind(string(m.Kind)); err != nil {
		return err
	}
	if _, err := ParseSource(string(m.Source)); err != nil {
		return err
	}
	if m.Sensitivity != "" {
		if _, err := ParseSensitivity(string(m.Sensitivity)); err != nil {
			return err
		}
	}
	if m.Status != "" {
		if _, err := ParseStatus(string(m.Status)); err != nil {
			return err
		}
	}
	if err := CheckText("status_reason", m.StatusReason, l.MaxReasonBytes); err != nil {
		return err
	}
	if err := CheckContent(m.Content, l.MaxContentBytes); err != nil {
		return err
	}
	if err := CheckText("reason", m.Reason, l.MaxReasonBytes); err != nil {
		return err
	}
	if err := CheckMetadata(m.Metadata, l.MaxMetadataBytes); err != nil {
		return err
	}
	if m.ValidFrom != nil && m.ValidUntil != nil && m.ValidUntil.Before(*m.ValidFrom) {
		return FieldError("valid_until", "must not be before valid_from")
	}
	if m.Version < 0 {
		return FieldError("version", "must not be negative")
	}
	if err := checkOptionalIdent("supersedes", m.Supersedes); err != nil {
		return err
	}
	if m.Key != "" {
		if err := CheckMemoryKey("key", m.Key); err != nil {
			return err
		}
	}
	if err := checkOptionalIdent("superseded_by", m.SupersededBy); err != nil {
		return err
	}
	if m.ContentSHA256 != "" && m.ContentSHA256 != ContentHash(m.Content) {
		return FieldError("content_sha256", "does not match the content")
	}
	if e := m.Embedding; e != nil {
		if err := e.Check(); err != nil {
			return err
		}
	}
	return nil
}

// Check validates an embedding: provenance present, dimension equal to the
// vector's length, every value finite, norm not zero.
func (e *Embedding) Check() error {
	switch {
	case e.Provider == "":
		return FieldError("embedding.provider", "is required")
	case e.Model == "":
		return FieldError("embedding.model", "is required")
	case len(e.Vector) == 0:
		return FieldError("embedding.vector", "must not be empty")
	case e.Dim != len(e.Vector):
		return FieldError("embedding.dim", "is %d but the vector has %d values", e.Dim, len(e.Vector))
	}
	var norm float64
	for _, v := range e.Vector {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return FieldError("embedding.vector", "has a non-finite value")
		}
		norm += f * f
	}
	if norm == 0 {
		return FieldError("embedding.vector", "has zero norm")
	}
	return nil
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
