package auth_test

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
)

// TestGrantOf: what a key is told about itself is its own record and what
// the permission table and ScopeFor derive from it, and never its hash.
func TestGrantOf(t *testing.T) {
	t.Parallel()
	sawTenantWide, sawBound := false, false
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			k := *b.key
			k.Name = "support bot"
			k.Hash = auth.Hash("mgk_" + strings.Repeat("s", 43))
			g := auth.GrantOf(&k)
			if g.KeyID != k.ID || g.Tenant != k.Tenant || g.Role != k.Role || g.Principal != k.Principal || g.Agent != k.Agent || g.Name != k.Name {
				t.Fatalf("GrantOf(%+v) = %+v: the record differs", k, g)
			}
			// Operations: exactly those Allowed, in the order of Ops.
			var want []auth.Op
			for _, op := range auth.Ops {
				if auth.Allowed(k.Role, op) {
					want = append(want, op)
				}
			}
			if !slices.Equal(g.Operations, want) || !slices.Contains(g.Operations, auth.OpWhoami) {
				t.Fatalf("operations %v, want %v", g.Operations, want)
			}
			// TenantWide is what ScopeFor does with a tenant-wide
			// operation that names no principal.
			s, err := auth.ScopeFor(&k, auth.OpList, memgate.Scope{})
			if wide := err == nil && s.AllPrincipals; g.TenantWide != wide {
				t.Fatalf("tenant_wide %v, but ScopeFor(list, no principal) gives %+v, %v", g.TenantWide, s, err)
			}
			if !slices.Equal(g.Sources, auth.SourcesOf(&k)) || len(g.Sources) == 0 {
				t.Fatalf("sources %v, want %v", g.Sources, auth.SourcesOf(&k))
			}
			if g.MayIncludeRestricted != auth.MayIncludeRestricted(k.Role) {
				t.Fatalf("may_include_restricted %v for role %s", g.MayIncludeRestricted, k.Role)
			}
			if g.MayPreview != auth.MayPreview(k.Role) {
				t.Fatalf("may_preview %v for role %s", g.MayPreview, k.Role)
			}
			if g.TenantWide {
				sawTenantWide = true
			} else {
				sawBound = true
			}

			b, err := json.Marshal(g)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), k.Hash) || strings.Contains(strings.ToLower(string(b)), "hash") {
				t.Fatalf("the grant carries the key's hash: %s", b)
			}
			var fields map[string]any
			if err := json.Unmarshal(b, &fields); err != nil {
				t.Fatal(err)
			}
			var names []string
			for n := range fields {
				names = append(names, n)
			}
			sort.Strings(names)
			wantNames := []string{"key_id", "may_include_restricted", "may_preview", "name", "operations", "role", "sources", "tenant", "tenant_wide"}
			if k.Principal != "" {
				wantNames = append(wantNames, "principal")
			}
			if k.Agent != "" {
				wantNames = append(wantNames, "agent")
			}
			sort.Strings(wantNames)
			if !slices.Equal(names, wantNames) {
				t.Fatalf("grant fields %v, want %v", names, wantNames)
			}
		})
	}
	// The sweep covered both answers.
	if !sawTenantWide || !sawBound {
		t.Fatalf("bindings covered tenant-wide %v, bound %v; want both", sawTenantWide, sawBound)
	}
}

func TestAllowedOps(t *testing.T) {
	t.Parallel()
	if got := auth.AllowedOps(memgate.RoleAdmin); !slices.Equal(got, auth.Ops) {
		t.Fatalf("admin: %v, want every operation %v", got, auth.Ops)
	}
	if got, want := auth.AllowedOps(memgate.RoleUser), []auth.Op{
		auth.OpRemember, auth.OpRecall, auth.OpList, auth.OpGet, auth.OpUpdate, auth.OpRevoke, auth.OpDelete, auth.OpForget, auth.OpAudit, auth.OpStats, auth.OpWhoami,
	}; !slices.Equal(got, want) {
		t.Fatalf("user: %v, want %v", got, want)
	}
	for _, role := range []memgate.Role{"", "root"} {
		if got := auth.AllowedOps(role); got == nil || len(got) != 0 {
			t.Fatalf("unknown role %q: %#v, want an empty list", role, got)
		}
	}
}
