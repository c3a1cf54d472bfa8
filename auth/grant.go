package auth

import "github.com/memgate/memgate"

// Grant is what a key may do, as a caller is told it (GET /v1/whoami): the
// key's public record and what the permission table and ScopeFor derive
// from it. It holds no hash and no secret, and it is derived from the
// key alone: no request field can change it.
type Grant struct {
	KeyID     string       `json:"key_id"`
	Tenant    string       `json:"tenant"`
	Role      memgate.Role `json:"role"`
	Principal string       `json:"principal,omitempty"` // the bound principal; "" when unbound
	Agent     string       `json:"agent,omitempty"`     // the bound agent; "" when unbound
	Name      string       `json:"name,omitempty"`
	// Operations are the operations the role is allowed (Allowed), in the
	// order of Ops.
	Operations []Op `json:"operations"`
	// TenantWide is true when the key may act across every principal of
	// its tenant on the tenant-wide operations (list, stats, audit,
	// export, import, keys) by naming none: an unbound admin key.
	TenantWide bool `json:"tenant_wide"`
	// MayIncludeRestricted is true when recall may be asked for restricted
	// memories with this key (MayIncludeRestricted).
	MayIncludeRestricted bool `json:"may_include_restricted"`
	// MayPreview is true when recall may be marked a preview with this
	// key (MayPreview: the inspector's dry run).
	MayPreview bool `json:"may_preview"`
	// Sources are the sources the key may claim for what it writes
	// (SourcesOf).
	Sources []memgate.Source `json:"sources"`
}

// GrantOf returns what k grants. k must be a key Authenticate returned.
func GrantOf(k *memgate.Key) Grant {
	return Grant{
		KeyID: k.ID, Tenant: k.Tenant, Role: k.Role,
		Principal: k.Principal, Agent: k.Agent, Name: k.Name,
		Operations:           AllowedOps(k.Role),
		TenantWide:           tenantWideKey(k),
		MayIncludeRestricted: MayIncludeRestricted(k.Role),
		MayPreview:           MayPreview(k.Role),
		Sources:              SourcesOf(k),
	}
}

// AllowedOps returns the operations role may perform, in the order of Ops
// (empty, not nil, for an unknown role).
func AllowedOps(role memgate.Role) []Op {
	ops := []Op{}
	for _, op := range Ops {
		if Allowed(role, op) {
			ops = append(ops, op)
		}
	}
	return ops
}

// tenantWideKey reports whether k may act on every principal of its tenant
// (on a tenant-wide operation, naming no principal): an admin key, which is
// never bound to a principal. ScopeFor applies the same rule.
func tenantWideKey(k *memgate.Key) bool {
	return k.Role == memgate.RoleAdmin && k.Principal == ""
}
