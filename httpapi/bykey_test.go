package httpapi_test

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/memgate/memgate"
)

// TestKeyedMemories: remembering a key supersedes the memory that has it;
// GET, PATCH (compare-and-set with If-Match) and DELETE by key act on the
// key's memory at the level the query string names; another principal's
// key, another level's and a restricted one an agent key cannot read
// answer exactly like a key nobody has.
func TestKeyedMemories(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agent := h.key("acme", memgate.RoleAgent, "alice", "")
	user := h.key("acme", memgate.RoleUser, "alice", "")
	bob := h.key("acme", memgate.RoleUser, "bob", "")
	at := func(key, extra string) string { return "/v1/memories/by-key?key=" + url.QueryEscape(key) + extra }

	first := h.remember(user, map[string]any{"kind": "preference", "source": "user", "content": "Alice takes her coffee black.", "key": "pref:coffee"})
	second := h.remember(user, map[string]any{"kind": "preference", "source": "user", "content": "Alice now takes oat milk in her coffee.", "key": "pref:coffee"})
	if second.Supersedes != first.ID || second.Key != "pref:coffee" {
		t.Fatalf("the second write of the key: %+v", second)
	}
	var got memgate.Memory
	h.do("GET", at("pref:coffee", ""), agent, nil).want(t, http.StatusOK).decode(t, &got)
	if got.ID != second.ID {
		t.Fatalf("GET by key: %s, want %s", got.ID, second.ID)
	}
	h.do("GET", "/v1/memories/"+first.ID, agent, nil).want(t, http.StatusOK).decode(t, &got)
	if got.Status != memgate.StatusSuperseded || got.SupersededBy != second.ID {
		t.Fatalf("the first memory: %s superseded by %q", got.Status, got.SupersededBy)
	}

	// Compare-and-set by key: the version the caller saw, or a conflict.
	h.do("PATCH", at("pref:coffee", ""), user, map[string]any{"reason": "she said so"}, "If-Match", strconv.FormatInt(second.Version+1, 10)).
		wantError(t, http.StatusConflict, memgate.ECONFLICT, "")
	h.do("PATCH", at("pref:coffee", ""), user, map[string]any{"reason": "she said so"}, "If-Match", strconv.FormatInt(second.Version, 10)).
		want(t, http.StatusOK).decode(t, &got)
	if got.ID != second.ID || got.Reason != "she said so" || got.Version != second.Version+1 {
		t.Fatalf("PATCH by key: %+v", got)
	}

	// Foreign = missing: another principal, another level, a key nobody
	// has; and a restricted keyed memory for the agent key.
	miss := h.do("GET", at("pref:nothing", ""), agent, nil)
	miss.wantError(t, http.StatusNotFound, memgate.ENOTFOUND, "")
	for what, r := range map[string]resp{
		"another principal's key": h.do("GET", at("pref:coffee", ""), bob, nil),
		"another agent's level":   h.do("GET", at("pref:coffee", "&agent=planner"), user, nil),
		"a conversation's level":  h.do("GET", at("pref:coffee", "&conversation=c-1"), user, nil),
	} {
		if r.status != http.StatusNotFound || string(r.body) != string(miss.body) {
			t.Errorf("%s: %d %s, a key nobody has answers %s", what, r.status, r.body, miss.body)
		}
	}
	secret := h.remember(user, map[string]any{"kind": "fact", "source": "user", "content": "Alice's diagnosis is private.", "sensitivity": "restricted", "key": "health:quokkablimp"})
	h.do("GET", at("health:quokkablimp", ""), user, nil).want(t, http.StatusOK) // control
	if r := h.do("GET", at("health:quokkablimp", ""), agent, nil); r.status != http.StatusNotFound || string(r.body) != string(miss.body) {
		t.Fatalf("a restricted keyed memory for an agent key: %d %s", r.status, r.body)
	}
	if r := h.do("PATCH", at("health:quokkablimp", ""), agent, map[string]any{"reason": "x"}, "If-Match", "1"); r.status != http.StatusNotFound || string(r.body) != string(miss.body) {
		t.Fatalf("updating a restricted keyed memory with an agent key: %d %s", r.status, r.body)
	}
	h.do("GET", "/v1/memories/"+secret.ID, user, nil).want(t, http.StatusOK)

	// Bad input names the field; an unknown parameter is refused.
	h.do("GET", "/v1/memories/by-key", agent, nil).wantError(t, http.StatusBadRequest, memgate.EINVALID, "key")
	h.do("GET", at("has space", ""), agent, nil).wantError(t, http.StatusBadRequest, memgate.EINVALID, "key")
	h.do("GET", at("pref:coffee", "&limit=3"), agent, nil).wantError(t, http.StatusBadRequest, memgate.EINVALID, "limit")
	h.do("PUT", at("pref:coffee", ""), agent, nil).wantError(t, http.StatusMethodNotAllowed, "method_not_allowed", "")

	// DELETE by key removes the key's memory; the version it superseded
	// stays in the chain, and the key then names nothing.
	h.do("DELETE", at("pref:coffee", ""), user, nil).want(t, http.StatusOK)
	h.do("GET", at("pref:coffee", ""), user, nil).wantError(t, http.StatusNotFound, memgate.ENOTFOUND, "")
	h.do("GET", "/v1/memories/"+first.ID, user, nil).want(t, http.StatusOK)
}
