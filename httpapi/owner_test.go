package httpapi_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/memgate/memgate"
)

// TestPrincipalInTheBody: an admin's calls by id name the memory's
// principal in the body where a body exists, as well as in the query
// string; an error says where it was expected; naming two is invalid; a
// principal that does not own the memory answers like a missing id.
func TestPrincipalInTheBody(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin := h.key("acme", memgate.RoleAdmin, "", "")
	agent := h.key("acme", memgate.RoleAgent, "alice", "")
	m := h.remember(admin, map[string]any{"principal": "alice", "kind": "fact", "source": "user", "content": "Alice plays the cello."})
	held := h.remember(agent, map[string]any{"kind": "preference", "source": "assistant", "content": "Alice prefers morning rehearsals."})
	base := "/v1/memories/" + m.ID

	// Without a principal anywhere: the error names both places for a
	// call with a body, the query string for one without.
	r := h.do("GET", base, admin, nil)
	r.wantError(t, http.StatusBadRequest, memgate.EINVALID, "principal")
	if _, _, msg := r.apiError(t); !strings.Contains(msg, "?principal=") || strings.Contains(msg, "body") {
		t.Fatalf("get without a principal: %q", msg)
	}
	r = h.do("POST", base+"/revoke", admin, map[string]any{"reason": "x"})
	r.wantError(t, http.StatusBadRequest, memgate.EINVALID, "principal")
	if _, _, msg := r.apiError(t); !strings.Contains(msg, "?principal=") || !strings.Contains(msg, "body") {
		t.Fatalf("revoke without a principal: %q", msg)
	}

	// Two principals: invalid, nothing changes.
	h.do("POST", base+"/feedback?principal=alice", admin, map[string]any{"principal": "bob", "value": 1}).
		wantError(t, http.StatusBadRequest, memgate.EINVALID, "principal")

	// Another principal in the body: like a missing id.
	miss := h.do("POST", "/v1/memories/"+missingID+"/feedback", admin, map[string]any{"principal": "bob", "value": 1})
	sameAsMissing(t, h.do("POST", base+"/feedback", admin, map[string]any{"principal": "bob", "value": 1}), miss, m.ID, missingID)

	// In the body: every call by id with a body works.
	var got memgate.Memory
	h.do("POST", base+"/feedback", admin, map[string]any{"principal": "alice", "value": 1}).want(t, http.StatusOK).decode(t, &got)
	if got.Feedback.Count != 1 {
		t.Fatalf("feedback with the principal in the body: %+v", got.Feedback)
	}
	h.do("PATCH", base, admin, map[string]any{"principal": "alice", "reason": "she told us"}, "If-Match", strconv.FormatInt(got.Version, 10)).
		want(t, http.StatusOK).decode(t, &got)
	// The same principal in both places is fine.
	h.do("POST", "/v1/memories/"+held.ID+"/approve?principal=alice", admin, map[string]any{"principal": "alice"}, "If-Match", strconv.FormatInt(held.Version, 10)).
		want(t, http.StatusOK)
	h.do("POST", base+"/revoke", admin, map[string]any{"principal": "alice", "reason": "moved on"}).want(t, http.StatusOK).decode(t, &got)
	if got.Status != memgate.StatusRevoked || got.Reason != "she told us" {
		t.Fatalf("after revoke: %s %q", got.Status, got.Reason)
	}
	// A key bound to the principal needs none (the control of the
	// required principal).
	h.do("GET", "/v1/memories/"+held.ID, agent, nil).want(t, http.StatusOK)
}
