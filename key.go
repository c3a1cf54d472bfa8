package memgate

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

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
	// delete and forget that principal's memories, and read its audit log
	// and counts (stats).
	RoleUser Role = "user"
)

// Roles lists every role.
var Roles = []Role{RoleAdmin, RoleAgent, RoleUser}

// Key is an API key's record. The secret itself is never stored: only
// its SHA-256 (Hash). The key fixes the tenant and, where set, the
// principal and agent; requests may only narrow within that binding.
type Key struct {
	ID        string `json:"id"` // public identifier, safe to log
	Tenant    string `json:"tenant"`
	Role      Role   `json:"role"`
	Principal string `json:"principal,omitempty"`
	Agent     string `json:"agent,omitempty"`
	Name      string `json:"name,omitempty"`
	// Sources are the sources the key may claim for what it writes, when
	// granted at creation; empty means its role's default (package auth:
	// agent assistant and tool, user user, admin every source).
	Sources   []Source   `json:"sources,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	Hash      string     `json:"-"`
}

// MaxKeyNameBytes bounds a key's Name.
const MaxKeyNameBytes = 128

// ParseRole returns the role named s, or an error naming the field.
func ParseRole(s string) (Role, error) {
	for _, r := range Roles {
		if string(r) == s {
			return r, nil
		}
	}
	if s == "" {
		return "", FieldError("role", "is required (one of admin, agent, user)")
	}
	return "", FieldError("role", "unknown role %q (one of admin, agent, user)", clip(s))
}

// Validate checks a key record: id, tenant and hash well-formed (the hash a
// lower-case hex SHA-256), the role known, and a binding that cannot widen
// anything: a user key is bound to a principal, only an agent key may be
// bound to an agent, and an admin key is tenant-wide (bound to nothing, so
// it can never mint a key wider than itself). Name is free text of at most
// MaxKeyNameBytes, without control characters.
func (k *Key) Validate() error {
	if err := CheckIdent("id", k.ID); err != nil {
		return err
	}
	if err := CheckIdent("tenant", k.Tenant); err != nil {
		return err
	}
	if _, err := ParseRole(string(k.Role)); err != nil {
		return err
	}
	if err := checkOptionalIdent("principal", k.Principal); err != nil {
		return err
	}
	if err := checkOptionalIdent("agent", k.Agent); err != nil {
		return err
	}
	switch {
	case k.Role == RoleUser && k.Principal == "":
		return FieldError("principal", "is required for a user key")
	case k.Role == RoleAdmin && k.Principal != "":
		return FieldError("principal", "an admin key is tenant-wide; bind a principal with role user or agent")
	case k.Agent != "" && k.Role != RoleAgent:
		return FieldError("agent", "only an agent key can be bound to an agent")
	}
	if err := CheckSources("sources", k.Sources); err != nil {
		return err
	}
	if err := CheckText("name", k.Name, MaxKeyNameBytes); err != nil {
		return err
	}
	for _, r := range k.Name {
		if unicode.IsControl(r) {
			return FieldError("name", "must not contain control characters")
		}
	}
	if !isLowerHex(k.Hash, 64) {
		return FieldError("hash", "must be a SHA-256 in lower-case hex")
	}
	if k.RevokedAt != nil && k.RevokedAt.Before(k.CreatedAt) {
		return FieldError("revoked_at", "must not be before created_at")
	}
	return nil
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// CheckSources checks a list of sources: each known, none repeated (so the
// list is never longer than Sources).
func CheckSources(field string, ss []Source) error {
	if len(ss) > len(Sources) {
		return FieldError(field, "holds %d sources; there are only %d", len(ss), len(Sources))
	}
	seen := make(map[Source]bool, len(ss))
	for i, s := range ss {
		if _, err := ParseSource(string(s)); err != nil {
			return FieldError(fmt.Sprintf("%s[%d]", field, i), "%s", ErrorMessage(err))
		}
		if seen[s] {
			return FieldError(fmt.Sprintf("%s[%d]", field, i), "repeats %s", s)
		}
		seen[s] = true
	}
	return nil
}

// JoinSources and SplitSources are how stores keep a key's sources: one
// comma-separated text column ("" for none).
func JoinSources(ss []Source) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = string(s)
	}
	return strings.Join(parts, ",")
}

// SplitSources is the inverse of JoinSources.
func SplitSources(s string) []Source {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	out := make([]Source, len(parts))
	for i, p := range parts {
		out[i] = Source(p)
	}
	return out
}
