package memgate_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate"
)

func validMemory() memgate.Memory {
	return memgate.Memory{
		Tenant: "acme", Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser,
		Content: "Alice prefers tea.",
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	past := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	future := past.Add(time.Hour)
	tests := []struct {
		name   string
		change func(m *memgate.Memory)
		code   string
		field  string
	}{
		{"valid", func(m *memgate.Memory) {}, "", ""},
		{"valid with every optional field", func(m *memgate.Memory) {
			m.ID, m.Agent, m.Conversation = "m-1", "agent.1", "conv:2@x"
			m.Sensitivity, m.Status = memgate.SensitivityRestricted, memgate.StatusPending
			m.Reason, m.Metadata = "said so", map[string]any{"k": "v"}
			m.ValidFrom, m.ValidUntil = &past, &future
			m.Supersedes, m.ContentSHA256 = "m-0", memgate.ContentHash(m.Content)
		}, "", ""},
		{"missing tenant", func(m *memgate.Memory) { m.Tenant = "" }, memgate.EINVALID, "tenant"},
		{"missing principal", func(m *memgate.Memory) { m.Principal = "" }, memgate.EINVALID, "principal"},
		{"tenant with space", func(m *memgate.Memory) { m.Tenant = "a b" }, memgate.EINVALID, "tenant"},
		{"principal too long", func(m *memgate.Memory) { m.Principal = strings.Repeat("p", 129) }, memgate.EINVALID, "principal"},
		{"principal at max length", func(m *memgate.Memory) { m.Principal = strings.Repeat("p", 128) }, "", ""},
		{"agent with slash", func(m *memgate.Memory) { m.Agent = "a/b" }, memgate.EINVALID, "agent"},
		{"conversation with unicode", func(m *memgate.Memory) { m.Conversation = "café" }, memgate.EINVALID, "conversation"},
		{"id with quote", func(m *memgate.Memory) { m.ID = `x"y` }, memgate.EINVALID, "id"},
		{"unknown kind", func(m *memgate.Memory) { m.Kind = "opinion" }, memgate.EINVALID, "kind"},
		{"missing kind", func(m *memgate.Memory) { m.Kind = "" }, memgate.EINVALID, "kind"},
		{"unknown source", func(m *memgate.Memory) { m.Source = "admin" }, memgate.EINVALID, "source"},
		{"unknown status", func(m *memgate.Memory) { m.Status = "expired" }, memgate.EINVALID, "status"},
		{"unknown sensitivity", func(m *memgate.Memory) { m.Sensitivity = "secret" }, memgate.EINVALID, "sensitivity"},
		{"blank content", func(m *memgate.Memory) { m.Content = " \t\n\u00a0" }, memgate.EINVALID, "content"},
		{"empty content", func(m *memgate.Memory) { m.Content = "" }, memgate.EINVALID, "content"},
		{"NUL in content", func(m *memgate.Memory) { m.Content = "a\x00b" }, memgate.EINVALID, "content"},
		{"invalid UTF-8", func(m *memgate.Memory) { m.Content = "a\xffb" }, memgate.EINVALID, "content"},
		{"content at limit", func(m *memgate.Memory) { m.Content = strings.Repeat("a", 8192) }, "", ""},
		{"content over limit", func(m *memgate.Memory) { m.Content = strings.Repeat("a", 8193) }, memgate.ETOOLARGE, "content"},
		{"metadata over limit", func(m *memgate.Memory) { m.Metadata = map[string]any{"k": strings.Repeat("v", 4096)} }, memgate.ETOOLARGE, "metadata"},
		{"metadata empty key", func(m *memgate.Memory) { m.Metadata = map[string]any{"": 1} }, memgate.EINVALID, "metadata"},
		{"metadata NUL in a nested string", func(m *memgate.Memory) { m.Metadata = map[string]any{"a": []any{map[string]any{"b": "x\x00y"}}} }, memgate.EINVALID, "metadata"},
		{"metadata NUL in a nested key", func(m *memgate.Memory) { m.Metadata = map[string]any{"a": map[string]any{"b\x00": 1}} }, memgate.EINVALID, "metadata"},
		{"metadata number overflows float64", func(m *memgate.Memory) { m.Metadata = map[string]any{"n": json.Number("1e999")} }, memgate.EINVALID, "metadata"},
		{"metadata exact big integer", func(m *memgate.Memory) { m.Metadata = map[string]any{"n": json.Number("12345678901234567890")} }, "", ""},
		{"reason invalid UTF-8", func(m *memgate.Memory) { m.Reason = "\xc3" }, memgate.EINVALID, "reason"},
		{"validity reversed", func(m *memgate.Memory) { m.ValidFrom, m.ValidUntil = &future, &past }, memgate.EINVALID, "valid_until"},
		{"hash mismatch", func(m *memgate.Memory) { m.ContentSHA256 = memgate.ContentHash("other") }, memgate.EINVALID, "content_sha256"},
		{"embedding dim mismatch", func(m *memgate.Memory) {
			m.Embedding = &memgate.Embedding{Provider: "p", Model: "m", Dim: 3, Vector: []float32{1, 0}}
		}, memgate.EINVALID, "embedding.dim"},
		{"embedding zero norm", func(m *memgate.Memory) {
			m.Embedding = &memgate.Embedding{Provider: "p", Model: "m", Dim: 2, Vector: []float32{0, 0}}
		}, memgate.EINVALID, "embedding.vector"},
		{"embedding without model", func(m *memgate.Memory) {
			m.Embedding = &memgate.Embedding{Provider: "p", Dim: 1, Vector: []float32{1}}
		}, memgate.EINVALID, "embedding.model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := validMemory()
			tt.change(&m)
			err := m.Validate(memgate.Limits{})
			if got := memgate.ErrorCode(err); got != tt.code {
				t.Fatalf("code = %q (%v), want %q", got, err, tt.code)
			}
			if got := memgate.ErrorField(err); got != tt.field {
				t.Fatalf("field = %q (%v), want %q", got, err, tt.field)
			}
		})
	}
}

func TestErrorsDoNotEchoHugeValues(t *testing.T) {
	t.Parallel()
	m := validMemory()
	m.Kind = memgate.Kind(strings.Repeat("x", 10000))
	err := m.Validate(memgate.Limits{})
	if len(err.Error()) > 200 {
		t.Fatalf("error message is %d bytes: it echoes the value", len(err.Error()))
	}
}

func TestScopeValidateFailsClosed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		scope memgate.Scope
		field string
	}{
		{"tenant and principal", memgate.Scope{Tenant: "t", Principal: "p"}, ""},
		{"all principals", memgate.Scope{Tenant: "t", AllPrincipals: true}, ""},
		{"no tenant", memgate.Scope{Principal: "p"}, "tenant"},
		{"no principal", memgate.Scope{Tenant: "t"}, "principal"},
		{"principal and all principals", memgate.Scope{Tenant: "t", Principal: "p", AllPrincipals: true}, "principal"},
		{"bad agent", memgate.Scope{Tenant: "t", Principal: "p", Agent: "a b"}, "agent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.scope.Validate()
			if memgate.ErrorField(err) != tt.field || (tt.field == "") != (err == nil) {
				t.Fatalf("Validate() = %v, want field %q", err, tt.field)
			}
		})
	}
}

func TestScopeContains(t *testing.T) {
	t.Parallel()
	m := func(agent, conv string) *memgate.Memory {
		return &memgate.Memory{Tenant: "t", Principal: "p", Agent: agent, Conversation: conv}
	}
	tests := []struct {
		name  string
		scope memgate.Scope
		mem   *memgate.Memory
		want  bool
	}{
		{"owner", memgate.Scope{Tenant: "t", Principal: "p"}, m("", ""), true},
		{"other tenant", memgate.Scope{Tenant: "u", Principal: "p"}, m("", ""), false},
		{"other principal", memgate.Scope{Tenant: "t", Principal: "q"}, m("", ""), false},
		{"wide memory from agent", memgate.Scope{Tenant: "t", Principal: "p", Agent: "a"}, m("", ""), true},
		{"own agent", memgate.Scope{Tenant: "t", Principal: "p", Agent: "a"}, m("a", ""), true},
		{"other agent", memgate.Scope{Tenant: "t", Principal: "p", Agent: "a"}, m("b", ""), false},
		{"no agent filter sees agents", memgate.Scope{Tenant: "t", Principal: "p"}, m("b", "c"), true},
		{"other conversation", memgate.Scope{Tenant: "t", Principal: "p", Conversation: "c"}, m("", "d"), false},
		{"all principals", memgate.Scope{Tenant: "t", AllPrincipals: true}, m("a", "c"), true},
	}
	for _, tt := range tests {
		if got := tt.scope.Contains(tt.mem); got != tt.want {
			t.Errorf("%s: Contains = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestParseTTL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "12h": 12 * time.Hour, "1.5d": 36 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := memgate.ParseTTL(in); err != nil || got != want {
			t.Errorf("ParseTTL(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1h", "d", "xd", "0d", "-2d", "forever"} {
		if _, err := memgate.ParseTTL(in); memgate.ErrorField(err) != "ttl" {
			t.Errorf("ParseTTL(%q) error = %v, want a ttl field error", in, err)
		}
	}
}
