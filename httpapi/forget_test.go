package httpapi_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/sqlite"
)

// TestForgetLeavesNoIdentifier: the identifiers a caller chose for a
// person (principal, agent, conversation, idempotency keys) are in none of
// the server's log lines, and after forget (and, for a deleted memory's
// idempotency key, after delete) in neither the audit log as the API
// shows it nor the database's files (sqlite.Files: the database and its
// audit log, each with its -wal and -shm). The audit log keeps
// the person's events, under pseudonyms. The populated control: before
// forget the identifiers are in the files and the audit log, and another
// person's events keep their agent.
func TestForgetLeavesNoIdentifier(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const (
		person  = "zqxvbn-person-aurelia"
		agent   = "zqxvbn-agent-coach"
		conv    = "zqxvbn-conversation-aurelia"
		idemKey = "zqxvbn-idem-aurelia"
		doomKey = "zqxvbn-idem-doomed"
	)
	markers := []string{person, agent, conv, idemKey, doomKey}
	admin := h.key("acme", memgate.RoleAdmin, "", "")

	var ing ingestResult
	h.do("POST", "/v1/conversations/"+conv+"/messages", admin, map[string]any{"principal": person, "agent": agent,
		"messages": []map[string]any{{"role": "user", "content": "I keep bees on the roof."}}}, "Idempotency-Key", idemKey).
		want(t, http.StatusCreated).decode(t, &ing)
	doomed := h.do("POST", "/v1/memories", admin, map[string]any{"principal": person, "agent": agent, "conversation": conv,
		"kind": "fact", "source": "user", "content": "Aurelia's locker code is in the blue notebook."}, "Idempotency-Key", doomKey).
		want(t, http.StatusCreated).json(t)
	doomedID := doomed["memories"].([]any)[0].(map[string]any)["id"].(string)
	h.do("POST", "/v1/memories", admin, map[string]any{"principal": "bob", "agent": "helper", "kind": "fact", "source": "user",
		"content": "Bob keeps a vegetable garden."}).want(t, http.StatusCreated)
	h.do("POST", "/v1/recall", admin, map[string]any{"principal": person, "agent": agent, "conversation": conv, "query": "bees"}).want(t, http.StatusOK)
	h.do("GET", "/v1/memories/"+doomedID+"?principal="+person, admin, nil).want(t, http.StatusOK)

	scan := func() map[string][]string {
		t.Helper()
		found := map[string][]string{}
		for _, f := range sqlite.Files(h.path) {
			b, err := os.ReadFile(f)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			for _, m := range markers {
				if bytes.Contains(b, []byte(m)) {
					found[m] = append(found[m], filepath.Base(f))
				}
			}
		}
		return found
	}
	if found := scan(); len(found) != len(markers) {
		t.Fatalf("control: before forget, the files hold %v; want every marker", found)
	}
	if body := string(h.do("GET", "/v1/audit?principal="+person, admin, nil).want(t, http.StatusOK).body); !strings.Contains(body, agent) {
		t.Fatalf("control: before forget, the audit log does not name the agent: %s", body)
	}

	// Delete: the memory's idempotency record goes with it.
	h.do("DELETE", "/v1/memories/"+doomedID+"?principal="+person, admin, nil).want(t, http.StatusOK)
	if found := scan(); len(found[doomKey]) != 0 || len(found[idemKey]) == 0 {
		t.Fatalf("after delete, the deleted memory's key is in %v (want none), the kept one's in %v (want some)", found[doomKey], found[idemKey])
	}

	var rc struct {
		Forgotten      int64  `json:"forgotten"`
		AuditPrincipal string `json:"audit_principal"`
	}
	h.do("POST", "/v1/forget", admin, map[string]any{"principal": person}).want(t, http.StatusOK).decode(t, &rc)
	if rc.Forgotten != 1 || !strings.HasPrefix(rc.AuditPrincipal, "forgotten:") {
		t.Fatalf("forget receipt %+v", rc)
	}
	if found := scan(); len(found) != 0 {
		t.Errorf("after forget, the files hold %v", found)
	}

	// The audit log keeps the person's events under pseudonyms only.
	audit := h.do("GET", "/v1/audit?principal="+rc.AuditPrincipal, admin, nil).want(t, http.StatusOK)
	var page struct {
		Events []memgate.AuditEvent `json:"events"`
	}
	audit.decode(t, &page)
	agents := 0
	for _, ev := range page.Events {
		if ev.Agent != "" {
			agents++
			if !strings.HasPrefix(ev.Agent, "forgotten:") {
				t.Errorf("a forgotten person's %s event names agent %q", ev.Action, ev.Agent)
			}
		}
	}
	if len(page.Events) < 4 || agents == 0 {
		t.Fatalf("the audit log under the pseudonym: %d events, %d with an agent; want the person's events, with their agents' pseudonyms", len(page.Events), agents)
	}
	all := string(h.do("GET", "/v1/audit", admin, nil).want(t, http.StatusOK).body)
	for _, m := range markers {
		if strings.Contains(all, m) {
			t.Errorf("after forget, the audit log holds %q", m)
		}
	}
	// Control: bob's event keeps its agent's name.
	if bobs := string(h.do("GET", "/v1/audit?principal=bob", admin, nil).want(t, http.StatusOK).body); !strings.Contains(bobs, `"agent":"helper"`) {
		t.Errorf("control: bob's events lost their agent: %s", bobs)
	}

	// No log line ever named the person's identifiers; the routes are
	// there (the control).
	logs := h.logs.String()
	for _, m := range markers {
		if strings.Contains(logs, m) {
			t.Errorf("the logs hold %q", m)
		}
	}
	for _, route := range []string{`"route":"/v1/conversations/{id}/messages"`, `"route":"/v1/memories/{id}"`, `"id":"` + doomedID + `"`} {
		if !strings.Contains(logs, route) {
			t.Errorf("control: the logs lack %s", route)
		}
	}
}
