package auth

import "github.com/memgate/memgate"

// Grant is memgate.Grant, what a key may do as a caller is told it (the callers' contract).
type Grant = memgate.Grant

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
