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
type Scope struct {
	Tenant        string
	Principal     string
	Agent         string
	Conversation  string
	AllPrincipals bool
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
	if s.Conversation != "" && m.Conversation != "" && m.Conversation != s.Conversation {
		return false
	}
	return true
}
