package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/policy"
)

// Issue 26, finding 1: a keyed write, a batch item and a duplicate replace
// or fold into only what the writer could itself supersede. Each source is
// its own key space (and dedup space): an agent's keyed write beside a
// person's memory with the same key is a memory of its own, and its
// answer names nothing of the person's. Controls: the agent replaces its
// own keyed memory, the person theirs, and a duplicate folds into the
// writer's own memory.
func TestKeyedWriteNeverReplacesWhatItMayNotSupersede(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agent := h.key("acme", memgate.RoleAgent, "alice", "")
	user := h.key("acme", memgate.RoleUser, "alice", "")
	admin := h.key("acme", memgate.RoleAdmin, "", "")
	byKey := func(key string) string { return "/v1/memories/by-key?key=" + url.QueryEscape(key) }

	therapy := h.remember(user, map[string]any{"kind": "task", "source": "user", "sensitivity": "restricted",
		"content": "Therapy appointment Tuesday 5pm zqxjvarnish", "key": "task:health"})
	h.do("GET", byKey("task:health"), agent, nil).wantError(t, http.StatusNotFound, memgate.ENOTFOUND, "")
	h.do("GET", byKey("task:health"), user, nil).want(t, http.StatusOK) // control

	noneBody := map[string]any{"kind": "task", "source": "assistant", "content": "No appointments this week", "key": "task:health"}
	r := h.do("POST", "/v1/memories", agent, noneBody).want(t, http.StatusCreated)
	if strings.Contains(string(r.body), therapy.ID) {
		t.Fatalf("the agent's keyed write names the person's restricted memory: %s", r.body)
	}
	var out remembered
	r.decode(t, &out)
	mine := out.Memories[0].Memory
	if mine.ID == therapy.ID || mine.Supersedes != "" || mine.Status != memgate.StatusActive || mine.Key != "task:health" {
		t.Fatalf("the agent's keyed write: %+v", mine)
	}
	if m := h.get("acme", therapy.ID); m.Status != memgate.StatusActive || m.SupersededBy != "" {
		t.Fatalf("the agent's keyed write left the person's memory %s (superseded by %q)", m.Status, m.SupersededBy)
	}
	// The same through a batch item.
	r = h.do("POST", "/v1/memories", agent, map[string]any{"memories": []map[string]any{
		{"kind": "task", "source": "assistant", "content": "Dentist next Friday", "key": "task:health"}}}).want(t, http.StatusCreated)
	if strings.Contains(string(r.body), therapy.ID) {
		t.Fatalf("the agent's batch names the person's restricted memory: %s", r.body)
	}
	r.decode(t, &out)
	second := out.Memories[0].Memory
	if m := h.get("acme", therapy.ID); m.Status != memgate.StatusActive {
		t.Fatalf("the agent's batch left the person's memory %s", m.Status)
	}
	// Control: the agent's own keyed memory is replaced by its next write.
	if second.Supersedes != mine.ID {
		t.Fatalf("the agent's second keyed write supersedes %q, want its own %s", second.Supersedes, mine.ID)
	}
	var got memgate.Memory
	h.do("GET", byKey("task:health"), agent, nil).want(t, http.StatusOK).decode(t, &got)
	if got.ID != second.ID {
		t.Fatalf("the agent's by-key: %s, want its own %s", got.ID, second.ID)
	}
	// Control: the person replaces their own, and by-key answers theirs.
	moved := h.remember(user, map[string]any{"kind": "task", "source": "user", "sensitivity": "restricted",
		"content": "Therapy moved to Wednesday 5pm", "key": "task:health"})
	if moved.Supersedes != therapy.ID {
		t.Fatalf("the person's second keyed write supersedes %q, want %s", moved.Supersedes, therapy.ID)
	}
	h.do("GET", byKey("task:health"), user, nil).want(t, http.StatusOK).decode(t, &got)
	if got.ID != moved.ID {
		t.Fatalf("the person's by-key: %s, want %s", got.ID, moved.ID)
	}
	if m := h.get("acme", second.ID); m.Status != memgate.StatusActive {
		t.Fatalf("the person's keyed write left the agent's memory %s", m.Status)
	}

	// A standard statement: the agent sees it, and still may not replace it.
	seat := h.remember(user, map[string]any{"kind": "preference", "source": "user", "content": "I prefer window seats.", "key": "pref:seat"})
	aisle := h.remember(agent, map[string]any{"kind": "preference", "source": "assistant", "content": "Alice prefers aisle seats.", "key": "pref:seat"})
	if aisle.Supersedes != "" || h.get("acme", seat.ID).Status != memgate.StatusActive {
		t.Fatalf("the agent's keyed write replaced the person's standard statement: %+v", aisle)
	}
	h.do("GET", byKey("pref:seat"), user, nil).want(t, http.StatusOK).decode(t, &got)
	if got.ID != seat.ID {
		t.Fatalf("the person's by-key: %s, want their own %s", got.ID, seat.ID)
	}

	// Dedup: the agent's duplicate of a person's statement is its own
	// memory; the statement's count is untouched. Control: the agent's
	// duplicate of its own folds.
	said := h.remember(user, map[string]any{"kind": "fact", "source": "user", "content": "Alice's sister lives in Porto."})
	var dup remembered
	h.do("POST", "/v1/memories", agent, map[string]any{"kind": "fact", "source": "assistant", "content": "Alice's sister lives in Porto."}).
		want(t, http.StatusCreated).decode(t, &dup)
	if d := dup.Memories[0]; d.Deduplicated || d.ID == said.ID || d.Source != memgate.SourceAssistant {
		t.Fatalf("the agent's duplicate folded into the person's statement: %+v", d)
	}
	if m := h.get("acme", said.ID); m.SeenCount != 1 {
		t.Fatalf("the agent's duplicate counted on the person's statement: seen %d", m.SeenCount)
	}
	var again remembered
	h.do("POST", "/v1/memories", agent, map[string]any{"kind": "fact", "source": "assistant", "content": "Alice's sister lives in Porto."}).
		want(t, http.StatusCreated).decode(t, &again)
	if a := again.Memories[0]; !a.Deduplicated || a.ID != dup.Memories[0].ID {
		t.Fatalf("the agent's duplicate of its own did not fold: %+v", a)
	}

	// A restricted holder in the agent's own space, which the agent cannot
	// read (an admin wrote it): the agent's write is a conflict that names
	// nothing. Control: the admin replaces it.
	hidden := h.remember(admin, map[string]any{"principal": "alice", "kind": "task", "source": "assistant", "sensitivity": "restricted",
		"content": "Follow up on the biopsy result", "key": "task:lab"})
	r = h.do("POST", "/v1/memories", agent, map[string]any{"kind": "task", "source": "assistant", "content": "Nothing to follow up", "key": "task:lab"})
	r.wantError(t, http.StatusConflict, memgate.ECONFLICT, "key")
	if strings.Contains(string(r.body), hidden.ID) {
		t.Fatalf("the refusal names the restricted memory: %s", r.body)
	}
	if m := h.get("acme", hidden.ID); m.Status != memgate.StatusActive {
		t.Fatalf("a refused keyed write left the restricted memory %s", m.Status)
	}
	next := h.remember(admin, map[string]any{"principal": "alice", "kind": "task", "source": "assistant", "sensitivity": "restricted",
		"content": "Biopsy result came back fine", "key": "task:lab"})
	if next.Supersedes != hidden.ID {
		t.Fatalf("the admin's keyed write supersedes %q, want %s", next.Supersedes, hidden.ID)
	}
}

// Issue 26, finding 5: an agent key may not revoke what a person said (a
// source it may not claim), as it may not update or supersede it; the
// memory stays active and recalled. Controls: the agent revokes its own
// memory, the user key the user's, and the policy setting
// revoke.any_source lets the agent revoke the person's.
func TestAgentMayNotRevokeWhatAPersonSaid(t *testing.T) {
	t.Parallel()
	for _, anySource := range []bool{false, true} {
		p := policy.Default()
		p.RevokeAnySource = anySource
		h := newHarness(t, withPolicy(p))
		agent := h.key("acme", memgate.RoleAgent, "alice", "")
		user := h.key("acme", memgate.RoleUser, "alice", "")
		said := h.remember(user, map[string]any{"kind": "preference", "source": "user", "content": "I prefer window seats."})
		r := h.do("POST", "/v1/memories/"+said.ID+"/revoke", agent, map[string]any{"reason": "outdated"})
		if anySource {
			r.want(t, http.StatusOK)
			if m := h.get("acme", said.ID); m.Status != memgate.StatusRevoked {
				t.Fatalf("with revoke.any_source the agent's revoke left the memory %s", m.Status)
			}
			continue
		}
		r.wantError(t, http.StatusForbidden, memgate.EFORBIDDEN, "source")
		if m := h.get("acme", said.ID); m.Status != memgate.StatusActive || m.Version != said.Version {
			t.Fatalf("a refused revoke changed the person's memory: %s v%d", m.Status, m.Version)
		}
		if ids := h.recallIDs(agent, map[string]any{"query": "window seats"}); !has(ids, said.ID) {
			t.Fatalf("after a refused revoke the memory is not recalled: %v", ids)
		}
		own := h.remember(agent, map[string]any{"kind": "task", "source": "assistant", "content": "Book the flight to Lisbon."})
		h.do("POST", "/v1/memories/"+own.ID+"/revoke", agent, map[string]any{"reason": "done"}).want(t, http.StatusOK)
		if m := h.get("acme", own.ID); m.Status != memgate.StatusRevoked {
			t.Fatalf("the agent's revoke of its own memory left it %s", m.Status)
		}
		h.do("POST", "/v1/memories/"+said.ID+"/revoke", user, map[string]any{"reason": "changed my mind"}).want(t, http.StatusOK)
		if m := h.get("acme", said.ID); m.Status != memgate.StatusRevoked {
			t.Fatalf("the user's revoke of their own memory left it %s", m.Status)
		}
	}
}
