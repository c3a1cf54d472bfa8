package auth_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
)

// TestPermissionTable states the permission table independently of the
// code: every role × every operation, allowed or denied.
func TestPermissionTable(t *testing.T) {
	t.Parallel()
	// Roles allowed per operation: a admin, g agent, u user.
	want := map[auth.Op]string{
		auth.OpRemember: "agu",
		auth.OpRecall:   "agu",
		auth.OpList:     "agu",
		auth.OpGet:      "agu",
		auth.OpUpdate:   "agu",
		auth.OpRevoke:   "agu",
		auth.OpApprove:  "a",
		auth.OpReject:   "a",
		auth.OpFeedback: "ag",
		auth.OpDelete:   "au",
		auth.OpForget:   "au",
		auth.OpAudit:    "au",
		auth.OpStats:    "au",
		auth.OpImport:   "a",
		auth.OpExport:   "a",
		auth.OpKeys:     "a",
		auth.OpWhoami:   "agu",
		auth.OpChat:     "ag",
	}
	if len(want) != len(auth.Ops) {
		t.Fatalf("the test covers %d operations, auth.Ops lists %d", len(want), len(auth.Ops))
	}
	letter := map[memgate.Role]string{memgate.RoleAdmin: "a", memgate.RoleAgent: "g", memgate.RoleUser: "u"}
	keyOf := map[memgate.Role]*memgate.Key{
		memgate.RoleAdmin: {ID: "key_a", Tenant: "acme", Role: memgate.RoleAdmin},
		memgate.RoleAgent: {ID: "key_g", Tenant: "acme", Role: memgate.RoleAgent},
		memgate.RoleUser:  {ID: "key_u", Tenant: "acme", Role: memgate.RoleUser, Principal: "alice"},
	}
	for _, op := range auth.Ops {
		allowed, ok := want[op]
		if !ok {
			t.Fatalf("operation %q is not in the test's table", op)
		}
		for _, role := range memgate.Roles {
			wantOK := strings.Contains(allowed, letter[role])
			t.Run(fmt.Sprintf("%s/%s", role, op), func(t *testing.T) {
				if got := auth.Allowed(role, op); got != wantOK {
					t.Fatalf("Allowed(%s, %s) = %v, want %v", role, op, got, wantOK)
				}
				// ScopeFor agrees, with a request that is otherwise fine.
				s, err := auth.ScopeFor(keyOf[role], op, memgate.Scope{Principal: "alice"})
				switch {
				case wantOK && err != nil:
					t.Fatalf("ScopeFor(%s, %s): %v", role, op, err)
				case wantOK && (s.Tenant != "acme" || s.Principal != "alice" || s.HideRestricted != (role == memgate.RoleAgent)):
					t.Fatalf("ScopeFor(%s, %s) = %+v", role, op, s)
				case !wantOK && memgate.ErrorCode(err) != memgate.EFORBIDDEN:
					t.Fatalf("ScopeFor(%s, %s): %v, want forbidden", role, op, err)
				case !wantOK && s != (memgate.Scope{}):
					t.Fatalf("ScopeFor(%s, %s) returned scope %+v with its error", role, op, s)
				}
			})
		}
	}
	// Unknown roles and operations are denied.
	for _, role := range []memgate.Role{"", "root", "Admin", "ADMIN"} {
		for _, op := range auth.Ops {
			if auth.Allowed(role, op) {
				t.Errorf("Allowed(%q, %s) = true", role, op)
			}
		}
	}
	for _, op := range []auth.Op{"", "sudo", "Remember", "keys "} {
		for _, role := range memgate.Roles {
			if auth.Allowed(role, op) {
				t.Errorf("Allowed(%s, %q) = true", role, op)
			}
			if _, err := auth.ScopeFor(keyOf[role], op, memgate.Scope{Principal: "alice"}); memgate.ErrorCode(err) != memgate.EFORBIDDEN {
				t.Errorf("ScopeFor(%s, %q): %v, want forbidden", role, op, err)
			}
		}
	}
}

// bindings are the keys the scope tests use: every role, every binding.
var bindings = []struct {
	name string
	key  *memgate.Key
}{
	{"admin", &memgate.Key{ID: "key_1", Tenant: "acme", Role: memgate.RoleAdmin}},
	{"agent", &memgate.Key{ID: "key_2", Tenant: "acme", Role: memgate.RoleAgent}},
	{"agent@alice", &memgate.Key{ID: "key_3", Tenant: "acme", Role: memgate.RoleAgent, Principal: "alice"}},
	{"agent/helper", &memgate.Key{ID: "key_4", Tenant: "acme", Role: memgate.RoleAgent, Agent: "helper"}},
	{"agent@alice/helper", &memgate.Key{ID: "key_5", Tenant: "acme", Role: memgate.RoleAgent, Principal: "alice", Agent: "helper"}},
	{"user@alice", &memgate.Key{ID: "key_6", Tenant: "acme", Role: memgate.RoleUser, Principal: "alice"}},
}

// requests are what a caller may send, forged fields included.
var requests = []struct {
	name string
	req  memgate.Scope
}{
	{"empty", memgate.Scope{}},
	{"own tenant", memgate.Scope{Tenant: "acme", Principal: "alice"}},
	{"other tenant", memgate.Scope{Tenant: "globex", Principal: "alice"}},
	{"other tenant only", memgate.Scope{Tenant: "globex"}},
	{"other tenant all", memgate.Scope{Tenant: "globex", AllPrincipals: true}},
	{"tenant in another case", memgate.Scope{Tenant: "ACME", Principal: "alice"}},
	{"alice", memgate.Scope{Principal: "alice"}},
	{"bob", memgate.Scope{Principal: "bob"}},
	{"all principals", memgate.Scope{AllPrincipals: true}},
	{"all and bob", memgate.Scope{Principal: "bob", AllPrincipals: true}},
	{"alice as helper", memgate.Scope{Principal: "alice", Agent: "helper"}},
	{"alice as intruder", memgate.Scope{Principal: "alice", Agent: "intruder"}},
	{"agent only", memgate.Scope{Agent: "intruder"}},
	{"alice in c1", memgate.Scope{Principal: "alice", Conversation: "c1"}},
	{"malformed principal", memgate.Scope{Principal: "al ice"}},
	{"malformed conversation", memgate.Scope{Principal: "alice", Conversation: "c 1"}},
}

// TestScopeFor states, for every binding × every request, the scope (as
// tenant/principal/agent/conversation, * for all principals) or the error
// (code:field), for a per-principal operation (get) and a tenant-wide one
// (list). Rows are request names in the order of requests.
func TestScopeFor(t *testing.T) {
	t.Parallel()
	const (
		fTenant    = "forbidden:tenant"
		fPrincipal = "forbidden:principal"
		fAgent     = "forbidden:agent"
		iPrincipal = "invalid_argument:principal"
		iConv      = "invalid_argument:conversation"
	)
	type row = map[string]string
	// Unbound admin and agent keys share their answers for get.
	unboundGet := row{
		"empty": iPrincipal, "own tenant": "acme/alice//", "other tenant": fTenant, "other tenant only": fTenant,
		"other tenant all": fTenant, "tenant in another case": fTenant, "alice": "acme/alice//", "bob": "acme/bob//",
		"all principals": fPrincipal, "all and bob": iPrincipal, "alice as helper": "acme/alice/helper/",
		"alice as intruder": "acme/alice/intruder/", "agent only": iPrincipal, "alice in c1": "acme/alice//c1",
		"malformed principal": iPrincipal, "malformed conversation": iConv,
	}
	boundAlice := row{
		"empty": "acme/alice//", "own tenant": "acme/alice//", "other tenant": fTenant, "other tenant only": fTenant,
		"other tenant all": fTenant, "tenant in another case": fTenant, "alice": "acme/alice//", "bob": fPrincipal,
		"all principals": fPrincipal, "all and bob": fPrincipal, "alice as helper": "acme/alice/helper/",
		"alice as intruder": "acme/alice/intruder/", "agent only": "acme/alice/intruder/", "alice in c1": "acme/alice//c1",
		"malformed principal": fPrincipal, "malformed conversation": iConv,
	}
	boundHelper := row{
		"empty": iPrincipal, "own tenant": "acme/alice/helper/", "other tenant": fTenant, "other tenant only": fTenant,
		"other tenant all": fTenant, "tenant in another case": fTenant, "alice": "acme/alice/helper/", "bob": "acme/bob/helper/",
		"all principals": fPrincipal, "all and bob": iPrincipal, "alice as helper": "acme/alice/helper/",
		"alice as intruder": fAgent, "agent only": iPrincipal, "alice in c1": "acme/alice/helper/c1",
		"malformed principal": iPrincipal, "malformed conversation": iConv,
	}
	boundBoth := row{
		"empty": "acme/alice/helper/", "own tenant": "acme/alice/helper/", "other tenant": fTenant, "other tenant only": fTenant,
		"other tenant all": fTenant, "tenant in another case": fTenant, "alice": "acme/alice/helper/", "bob": fPrincipal,
		"all principals": fPrincipal, "all and bob": fPrincipal, "alice as helper": "acme/alice/helper/",
		"alice as intruder": fAgent, "agent only": fAgent, "alice in c1": "acme/alice/helper/c1",
		"malformed principal": fPrincipal, "malformed conversation": iConv,
	}
	with := func(r row, changes row) row {
		out := row{}
		for k, v := range r {
			out[k] = v
		}
		for k, v := range changes {
			out[k] = v
		}
		return out
	}
	want := map[auth.Op]map[string]row{
		auth.OpGet: {
			"admin": unboundGet, "agent": unboundGet, "agent@alice": boundAlice,
			"agent/helper": boundHelper, "agent@alice/helper": boundBoth, "user@alice": boundAlice,
		},
		auth.OpList: {
			// Only an unbound admin may act tenant-wide.
			"admin":       with(unboundGet, row{"empty": "acme/*//", "all principals": "acme/*//", "agent only": "acme/*/intruder/"}),
			"agent":       unboundGet,
			"agent@alice": boundAlice, "agent/helper": boundHelper, "agent@alice/helper": boundBoth, "user@alice": boundAlice,
		},
	}
	for op, byKey := range want {
		for _, b := range bindings {
			rows := byKey[b.name]
			if len(rows) != len(requests) {
				t.Fatalf("%s/%s: the table has %d rows, want %d", op, b.name, len(rows), len(requests))
			}
			for _, r := range requests {
				t.Run(fmt.Sprintf("%s/%s/%s", op, b.name, r.name), func(t *testing.T) {
					s, err := auth.ScopeFor(b.key, op, r.req)
					if got, w := outcome(s, err), rows[r.name]; got != w {
						t.Fatalf("ScopeFor(%s, %s, %+v) = %s, want %s", b.name, op, r.req, got, w)
					}
				})
			}
		}
	}
}

func outcome(s memgate.Scope, err error) string {
	if err != nil {
		if s != (memgate.Scope{}) {
			return "error with a scope"
		}
		return memgate.ErrorCode(err) + ":" + memgate.ErrorField(err)
	}
	p := s.Principal
	if s.AllPrincipals {
		p = "*"
	}
	return fmt.Sprintf("%s/%s/%s/%s", s.Tenant, p, s.Agent, s.Conversation)
}

// TestScopeForNeverWidens sweeps every binding × every operation × every
// request and checks the invariants: the tenant is the key's, a bound
// principal or agent is always the scope's, all principals only for an
// unbound admin on a tenant-wide operation, another tenant always
// forbidden, and every scope returned valid.
func TestScopeForNeverWidens(t *testing.T) {
	t.Parallel()
	served := 0
	for _, b := range bindings {
		k := b.key
		for _, op := range auth.Ops {
			for _, r := range requests {
				s, err := auth.ScopeFor(k, op, r.req)
				what := fmt.Sprintf("ScopeFor(%s, %s, %s)", b.name, op, r.name)
				if !auth.Allowed(k.Role, op) {
					if memgate.ErrorCode(err) != memgate.EFORBIDDEN || memgate.ErrorField(err) != "" {
						t.Fatalf("%s: %v, want forbidden for the operation", what, err)
					}
					continue
				}
				if r.req.Tenant != "" && r.req.Tenant != k.Tenant {
					if memgate.ErrorCode(err) != memgate.EFORBIDDEN || memgate.ErrorField(err) != "tenant" {
						t.Fatalf("%s: %v, want forbidden naming tenant", what, err)
					}
					if strings.Contains(memgate.ErrorMessage(err), r.req.Tenant) {
						t.Fatalf("%s: the error echoes the other tenant", what)
					}
					continue
				}
				if err != nil {
					if c := memgate.ErrorCode(err); c != memgate.EFORBIDDEN && c != memgate.EINVALID {
						t.Fatalf("%s: %v, want forbidden or invalid_argument", what, err)
					}
					continue
				}
				served++
				switch {
				case s.Tenant != k.Tenant:
					t.Fatalf("%s: tenant %q, the key's is %q", what, s.Tenant, k.Tenant)
				case k.Principal != "" && (s.Principal != k.Principal || s.AllPrincipals):
					t.Fatalf("%s: %+v escapes the bound principal %q", what, s, k.Principal)
				case k.Agent != "" && s.Agent != k.Agent:
					t.Fatalf("%s: %+v escapes the bound agent %q", what, s, k.Agent)
				case s.AllPrincipals && (k.Role != memgate.RoleAdmin || !auth.TenantWide(op)):
					t.Fatalf("%s: all principals for a %s key on %s", what, k.Role, op)
				case r.req.Principal != "" && s.Principal != r.req.Principal:
					t.Fatalf("%s: principal %q, the request asked %q", what, s.Principal, r.req.Principal)
				case r.req.Agent != "" && s.Agent != r.req.Agent:
					t.Fatalf("%s: agent %q, the request asked %q", what, s.Agent, r.req.Agent)
				case s.Conversation != r.req.Conversation:
					t.Fatalf("%s: conversation %q, the request asked %q", what, s.Conversation, r.req.Conversation)
				}
				if err := s.Validate(); err != nil {
					t.Fatalf("%s: returned an invalid scope %+v: %v", what, s, err)
				}
			}
		}
	}
	if served == 0 {
		t.Fatal("no request was served: the sweep checks nothing")
	}
}

func TestScopeForWithoutKey(t *testing.T) {
	t.Parallel()
	for _, k := range []*memgate.Key{nil, {Role: memgate.RoleAdmin}, {Tenant: "acme", Role: memgate.RoleUser}} {
		s, err := auth.ScopeFor(k, auth.OpRecall, memgate.Scope{Tenant: "acme", Principal: "alice"})
		if memgate.ErrorCode(err) != memgate.EUNAUTHORIZED || s != (memgate.Scope{}) {
			t.Fatalf("ScopeFor(%+v): %+v, %v; want unauthenticated", k, s, err)
		}
	}
}

// TestSourcesOf: what a key may claim is its grant, else its role's
// default; an agent key never claims user, system, verified_tool or import
// without a grant.
func TestSourcesOf(t *testing.T) {
	t.Parallel()
	agent := &memgate.Key{ID: "key_g", Tenant: "acme", Role: memgate.RoleAgent}
	user := &memgate.Key{ID: "key_u", Tenant: "acme", Role: memgate.RoleUser, Principal: "alice"}
	admin := &memgate.Key{ID: "key_a", Tenant: "acme", Role: memgate.RoleAdmin}
	granted := &memgate.Key{ID: "key_x", Tenant: "acme", Role: memgate.RoleAgent, Sources: []memgate.Source{memgate.SourceUser, memgate.SourceAssistant}}
	cases := []struct {
		key  *memgate.Key
		want []memgate.Source
	}{
		{agent, []memgate.Source{memgate.SourceAssistant, memgate.SourceTool}},
		{user, []memgate.Source{memgate.SourceUser}},
		{admin, memgate.Sources},
		{granted, []memgate.Source{memgate.SourceUser, memgate.SourceAssistant}},
	}
	for _, tc := range cases {
		got := auth.SourcesOf(tc.key)
		if !slices.Equal(got, tc.want) {
			t.Fatalf("SourcesOf(%s) = %v, want %v", tc.key.ID, got, tc.want)
		}
		for _, src := range memgate.Sources {
			if auth.MayClaim(tc.key, src) != slices.Contains(tc.want, src) {
				t.Fatalf("MayClaim(%s, %s) = %v", tc.key.ID, src, !slices.Contains(tc.want, src))
			}
		}
	}
	// The copy is the caller's: changing it grants nothing.
	got := auth.SourcesOf(agent)
	got[0] = memgate.SourceSystem
	if auth.MayClaim(agent, memgate.SourceSystem) {
		t.Fatal("editing SourcesOf's result granted system to an agent key")
	}
	if auth.MayClaim(nil, memgate.SourceUser) {
		t.Fatal("a nil key may claim user")
	}
}

// TestScopeNarrowsAgents: an agent key's scope never holds a restricted
// memory, and an agent-bound key's writes reach its agent's memories only;
// the control (admin, user, an unbound agent's writes, an agent-bound
// key's reads) is not narrowed.
func TestScopeNarrowsAgents(t *testing.T) {
	t.Parallel()
	bound := &memgate.Key{ID: "key_b", Tenant: "acme", Role: memgate.RoleAgent, Agent: "helper"}
	unbound := &memgate.Key{ID: "key_g", Tenant: "acme", Role: memgate.RoleAgent}
	user := &memgate.Key{ID: "key_u", Tenant: "acme", Role: memgate.RoleUser, Principal: "alice"}
	admin := &memgate.Key{ID: "key_a", Tenant: "acme", Role: memgate.RoleAdmin}
	cases := []struct {
		key         *memgate.Key
		op          auth.Op
		hide, exact bool
	}{
		{bound, auth.OpUpdate, true, true},
		{bound, auth.OpRevoke, true, true},
		{bound, auth.OpFeedback, true, true},
		{bound, auth.OpRemember, true, true},
		{bound, auth.OpRecall, true, false},
		{bound, auth.OpGet, true, false},
		{bound, auth.OpChat, true, false},
		{unbound, auth.OpUpdate, true, false},
		{unbound, auth.OpList, true, false},
		{user, auth.OpGet, false, false},
		{user, auth.OpUpdate, false, false},
		{admin, auth.OpUpdate, false, false},
	}
	for _, tc := range cases {
		s, err := auth.ScopeFor(tc.key, tc.op, memgate.Scope{Principal: "alice"})
		if err != nil {
			t.Fatalf("ScopeFor(%s, %s): %v", tc.key.ID, tc.op, err)
		}
		if s.HideRestricted != tc.hide || s.ExactAgent != tc.exact {
			t.Fatalf("ScopeFor(%s, %s) = %+v, want HideRestricted %v, ExactAgent %v", tc.key.ID, tc.op, s, tc.hide, tc.exact)
		}
	}
	// A request's own narrowing is kept.
	s, err := auth.ScopeFor(admin, auth.OpList, memgate.Scope{Principal: "alice", Agent: "helper", ExactAgent: true, HideRestricted: true})
	if err != nil || !s.ExactAgent || !s.HideRestricted {
		t.Fatalf("ScopeFor(admin, list, narrowed) = %+v, %v; want the narrowing kept", s, err)
	}
}

// TestErrorsSayWhatAndHow: the refusal of an operation says in words what
// the role may not do ("may not read the statistics", never "may not
// stats"), for every operation, and the refusal of a source says how an
// admin grants one.
func TestErrorsSayWhatAndHow(t *testing.T) {
	if got, want := auth.ErrForbidden(auth.OpStats).Message, "this API key's role may not read the statistics (operation stats)"; got != want {
		t.Errorf("auth.ErrForbidden(stats): %q, want %q", got, want)
	}
	for _, op := range auth.Ops {
		msg := auth.ErrForbidden(op).Message
		if !strings.HasSuffix(msg, " (operation "+string(op)+")") || strings.Contains(msg, "may not perform") {
			t.Errorf("ErrForbidden(%s): %q", op, msg)
		}
	}
	e := auth.ErrSource("source")
	if e.Code != memgate.EFORBIDDEN || e.Field != "source" {
		t.Errorf("ErrSource: %+v", e)
	}
	for _, want := range []string{"may claim", "/v1/whoami", "memgate keys create", "--sources"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("ErrSource's message %q lacks %q", e.Message, want)
		}
	}
}
