package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/memgate/memgate"
)

// Restricted memories reach recall only when the caller asks and its role
// allows it: the person (user key) and the admin may, an agent may not.
func TestIncludeRestrictedByRole(t *testing.T) {
	h := newHarness(t)
	admin := h.key("acme", memgate.RoleAdmin, "", "")
	user := h.key("acme", memgate.RoleUser, "alice", "")
	agent := h.key("acme", memgate.RoleAgent, "alice", "")
	m := h.remember(admin, map[string]any{"principal": "alice", "kind": "fact", "source": "user", "sensitivity": "restricted",
		"content": "Alice takes insulin twice a day for her diabetes."})
	ask := func(key string, restricted bool) resp {
		return h.do("POST", "/v1/recall", key, map[string]any{"principal": "alice", "query": "Does Alice take insulin for diabetes?", "include_restricted": restricted})
	}
	found := func(r resp) bool {
		var out struct {
			Results []struct {
				Memory struct{ ID string } `json:"memory"`
			} `json:"results"`
		}
		if err := json.Unmarshal(r.body, &out); err != nil {
			t.Fatalf("recall body %s: %v", r.body, err)
		}
		for _, x := range out.Results {
			if x.Memory.ID == m.ID {
				return true
			}
		}
		return false
	}
	for name, key := range map[string]string{"admin": admin, "user": user} {
		if r := ask(key, true); r.status != http.StatusOK || !found(r) {
			t.Errorf("%s with include_restricted: %d %s", name, r.status, r.body)
		}
	}
	if r := ask(agent, false); r.status != http.StatusOK || found(r) {
		t.Errorf("agent without include_restricted: %d, found %v", r.status, found(r))
	}
	r := ask(agent, true)
	if r.status != http.StatusForbidden || !strings.Contains(string(r.body), "include_restricted") {
		t.Fatalf("agent with include_restricted: %d %s", r.status, r.body)
	}
}
