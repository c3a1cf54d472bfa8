package memgate

import "time"

// Role is what an API key may do.
type Role string

const (
	// RoleAdmin may do everything in its tenant.
	RoleAdmin Role = "admin"
	// RoleAgent may remember, recall, list, get, update, revoke and give
	// feedback, for its bound principal or, unbound, the principals it
	// names; bound to an agent, it acts as that agent only.
	RoleAgent Role = "agent"
	// RoleUser is bound to one principal: it may read, recall, revoke,
	// delete and forget that principal's memories.
	RoleUser Role = "user"
)

// Roles lists every role.
var Roles = []Role{RoleAdmin, RoleAgent, RoleUser}

// Key is an API key's record. The secret itself is never stored: only
// its SHA-256 (Hash). The key fixes the tenant and, where set, the
// principal and agent; requests may only narrow within that binding.
type Key struct {
	ID        string     `json:"id"` // public identifier, safe to log
	Tenant    string     `json:"tenant"`
	Role      Role       `json:"role"`
	Principal string     `json:"principal,omitempty"`
	Agent     string     `json:"agent,omitempty"`
	Name      string     `json:"name,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	Hash      string     `json:"-"`
}
