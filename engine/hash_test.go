package engine

import (
	"testing"
	"time"

	"github.com/memgate/memgate"
)

// Idempotency records hold the request hash of the version that wrote
// them: a hash that changes composition turns every retry across an
// upgrade into a conflict. The values were computed before supersessions
// took keys; a request without Supersedes must keep them.
func TestRequestSHA256IsStable(t *testing.T) {
	t.Parallel()
	exp := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	from := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	until := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	full := RememberRequest{Memory: memgate.Memory{
		Tenant: "acme", Principal: "alice", Agent: "bot", Conversation: "c-1",
		Kind: memgate.KindFact, Source: memgate.SourceUser, Sensitivity: memgate.SensitivityRestricted,
		Content: "Alice drinks green tea.", Reason: "she said so",
		Metadata:  map[string]any{"topic": "tea", "n": 2, "ok": true},
		ExpiresAt: &exp, ValidFrom: &from, ValidUntil: &until,
	}, IdempotencyKey: "req-1"}
	short := RememberRequest{Memory: memgate.Memory{
		Tenant: "acme", Principal: "alice", Kind: memgate.KindFact, Source: memgate.SourceUser, Content: "Alice drinks green tea.",
	}, TTL: time.Hour}
	for _, c := range []struct {
		name string
		r    RememberRequest
		want string
	}{
		{"every field", full, "f9db59a38984498a9d4e5fdcb0e73eff433136d1f1ae3376f9a5d8529057c70a"},
		{"few fields and a ttl", short, "9b3dd8c6f5f66cf80dab3afec5dbbb0b94bb3bfcbf16297b3d8141539b648eb6"},
	} {
		if got := requestSHA256(c.r); got != c.want {
			t.Errorf("%s: request hash %s, want %s (records written before would no longer match)", c.name, got, c.want)
		}
		// Control: the memory superseded is part of the request.
		sup := c.r
		sup.Supersedes = "m_01"
		other := c.r
		other.Supersedes = "m_02"
		if h := requestSHA256(sup); h == c.want || h == requestSHA256(other) {
			t.Errorf("%s: the hash does not tell the memory superseded (%s)", c.name, h)
		}
	}
}
