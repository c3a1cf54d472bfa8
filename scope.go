package memgate

// Scope is who a request acts for. Tenant and Principal bound ownership:
// nothing outside them is ever read or written. Agent and Conversation narrow
// visibility: when set, a request sees memories of that agent (conversation)
// and memories stored at the wider level (empty agent or conversation); when
// empty, it sees the whole partition.
//
// Principal is required unless AllPrincipals is set, which only
// tenant-wide callers (an admin listing or counting across people) may do:
// an empty principal never silently widens a request.
//
// ExactAgent and HideRestricted narrow further, for what a key may touch
// (package auth sets them): with ExactAgent the scope holds only memories
// of Agent itself, not the wider level (an agent-bound key's writes); with
// HideRestricted it holds no restricted memory at all (an agent key, which
// never reads one). Stores apply both inside their queries, like the rest
// of the scope, so a memory outside answers exactly like a missing one.
type Scope struct {
	Tenant         string
	Principal      string
	Agent          string
	Conversation   string
	AllPrincipals  bool
	ExactAgent     bool
	HideRestricted bool
}

// Validate checks the scope fails closed: tenant always, principal unless
// AllPrincipals, each identifier well-formed.
func (s Scope) Validate() error {
	if err := CheckIdent("tenant", s.Tenant); err != nil {
		return err
	}
	if s.AllPrincipals {
		if s.Principal != "" {
			return FieldError("principal", "must be empty when all principals are requested")
		}
	} else if err := CheckIdent("principal", s.Principal); err != nil {
		return err
	}
	if err := checkOptionalIdent("agent", s.Agent); err != nil {
		return err
	}
	if s.ExactAgent && s.Agent == "" {
		return FieldError("agent", "is required for a scope of one agent's memories only")
	}
	return checkOptionalIdent("conversation", s.Conversation)
}

// Contains reports whether m is visible from s. Stores apply the same rule in
// their queries; this is for callers (and tests) that hold a memory already.
func (s Scope) Contains(m *Memory) bool {
	if m.Tenant != s.Tenant {
		return false
	}
	if !s.AllPrincipals && m.Principal != s.Principal {
		return false
	}
	if s.Agent != "" && m.Agent != "" && m.Agent != s.Agent {
		return false
	}
	if s.ExactAgent && m.Agent != s.Agent {
		return false
	}
	if s.HideRestricted && m.Sensitivity != SensitivityStandard && m.Sensitivity != "" {
		return false
	}
	if s.Conversation != "" && m.Conversation != "" && m.Conversation != s.Conversation {
		return false
	}
	return true
}
