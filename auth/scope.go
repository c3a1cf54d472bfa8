package auth

import (
	"github.com/memgate/memgate"
)

// Op is memgate.Op, an operation a request performs, as the permission table names it (the callers' contract).
type Op = memgate.Op

// Operations.
const (
	OpRemember Op = "remember"
	OpRecall   Op = "recall"
	OpList     Op = "list"
	OpGet      Op = "get"
	OpUpdate   Op = "update"
	OpRevoke   Op = "revoke"
	OpApprove  Op = "approve"
	OpReject   Op = "reject"
	OpFeedback Op = "feedback"
	OpDelete   Op = "delete"
	OpForget   Op = "forget"
	OpAudit    Op = "audit"
	OpStats    Op = "stats"
	OpImport   Op = "import"
	OpExport   Op = "export"
	OpKeys     Op = "keys"
	OpWhoami   Op = "whoami" // describe the caller's own key (GrantOf)
	// OpChat is a turn of the agent middleware (POST /v1/chat): recall,
	// a model call, and the exchange remembered. It remembers, so it is
	// granted to the roles that may remember.
	OpChat Op = "chat"
)

// Ops lists every operation, in the order of the permission table.
var Ops = []Op{
	OpRemember, OpRecall, OpList, OpGet, OpUpdate, OpRevoke, OpApprove, OpReject,
	OpFeedback, OpDelete, OpForget, OpAudit, OpStats, OpImport, OpExport, OpKeys,
	OpWhoami, OpChat,
}

// permissions is the permission table, the only one. A role may perform an
// operation when it is listed here; anything else (an unknown role, an
// unknown operation) is denied.
//
//	op         admin  agent  user
//	remember     ✓      ✓      ✓
//	recall       ✓      ✓      ✓
//	list         ✓      ✓      ✓
//	get          ✓      ✓      ✓
//	update       ✓      ✓      ✓
//	revoke       ✓      ✓      ✓
//	approve      ✓
//	reject       ✓
//	feedback     ✓      ✓
//	delete       ✓             ✓
//	forget       ✓             ✓
//	audit        ✓             ✓
//	stats        ✓             ✓
//	import       ✓
//	export       ✓
//	keys         ✓
//	whoami       ✓      ✓      ✓
//	chat         ✓      ✓
//
// Every role acts within its key's tenant only, and within its binding
// (ScopeFor): a user key reads, recalls, revokes, deletes, forgets, audits
// and counts (stats) its own principal's memories; an agent key works on
// the principals its requests name (or its bound one) and, when bound to
// an agent, as that agent only. Approving what the write gate held back is
// an admin's decision, not the agent's whose memory was held. Every key may
// ask what it is (whoami): the answer is its own record, without the hash.
// Chat (a turn of the agent middleware) remembers the exchange and may
// propose memories, so it is granted where remember is and not to a user
// key, which may not remember: a person talks to an agent through the
// agent's key, not their own. A user key may remember and update its own
// principal's memories as source user (what the person says themself,
// through the inspector or an app acting with their key).
//
// What a key may write is narrowed further by the sources it may claim
// (SourcesOf, MayClaim), and what it may read by sensitivity: an agent key
// never reads a restricted memory (ScopeFor sets HideRestricted).
var permissions = map[memgate.Role]map[Op]bool{
	memgate.RoleAdmin: set(Ops...),
	memgate.RoleAgent: set(OpRemember, OpRecall, OpList, OpGet, OpUpdate, OpRevoke, OpFeedback, OpWhoami, OpChat),
	memgate.RoleUser:  set(OpRemember, OpRecall, OpList, OpGet, OpUpdate, OpRevoke, OpDelete, OpForget, OpAudit, OpStats, OpWhoami),
}

func set(ops ...Op) map[Op]bool {
	m := make(map[Op]bool, len(ops))
	for _, op := range ops {
		m[op] = true
	}
	return m
}

// Allowed reports whether role may perform op (see the permission table on
// permissions). Unknown roles and operations are denied.
func Allowed(role memgate.Role, op Op) bool {
	return permissions[role][op]
}

// defaultSources are the sources each role may claim for what it writes
// when its key was granted none at creation: an agent asserts what it
// concluded (assistant) or what a tool returned (tool); a person what they
// say (user); an admin anything. user, system, verified_tool and import
// reach an agent key only by an explicit grant.
var defaultSources = map[memgate.Role][]memgate.Source{
	memgate.RoleAdmin: memgate.Sources,
	memgate.RoleAgent: {memgate.SourceAssistant, memgate.SourceTool},
	memgate.RoleUser:  {memgate.SourceUser},
}

// SourcesOf returns the sources k may claim: the ones granted at its
// creation, else its role's default. A copy: the caller may keep it.
func SourcesOf(k *memgate.Key) []memgate.Source {
	if k == nil {
		return nil
	}
	if len(k.Sources) > 0 {
		return append([]memgate.Source(nil), k.Sources...)
	}
	return append([]memgate.Source(nil), defaultSources[k.Role]...)
}

// MayClaim reports whether k may write a memory attributed to src, or
// change one that is.
func MayClaim(k *memgate.Key, src memgate.Source) bool {
	for _, s := range SourcesOf(k) {
		if s == src {
			return true
		}
	}
	return false
}

// ErrSource is the error for a source the key may not claim: forbidden,
// naming field (source, or an item's), the same for every such source.
func ErrSource(field string) *memgate.Error {
	return &memgate.Error{Code: memgate.EFORBIDDEN, Field: field, Message: "is not a source this API key may claim (GET /v1/whoami lists the ones it may); " +
		"an admin grants sources to a new key with memgate keys create --role ROLE --sources SOURCE,SOURCE"}
}

// MayLowerSensitivity reports whether role may make a restricted memory
// standard: the person (user) and the tenant's admin may; an agent, which
// never reads a restricted memory, may not.
func MayLowerSensitivity(role memgate.Role) bool {
	return role == memgate.RoleAdmin || role == memgate.RoleUser
}

// MayPreview reports whether role may mark a recall as a preview (left out
// of the memories' recall history because nothing reached a prompt): the
// inspector's people and admins; an agent's recalls reach prompts, and it
// may not hide them.
func MayPreview(role memgate.Role) bool {
	return role == memgate.RoleAdmin || role == memgate.RoleUser
}

// agentWrites are the operations that change existing memories: with a
// key bound to an agent they reach that agent's memories only (ScopeFor
// sets ExactAgent), never principal-wide ones or another agent's.
var agentWrites = set(OpRemember, OpUpdate, OpRevoke, OpFeedback, OpDelete, OpApprove, OpReject)

// MayIncludeRestricted reports whether role may ask recall for restricted
// memories: the person themself (user) and the tenant's admin may; an agent
// may not, so a restricted memory never reaches a prompt on an agent's say.
func MayIncludeRestricted(role memgate.Role) bool {
	return role == memgate.RoleAdmin || role == memgate.RoleUser
}

// tenantWide are the operations an unbound admin may perform across every
// principal of its tenant, when its request names none.
var tenantWide = set(OpList, OpStats, OpAudit, OpExport, OpImport, OpKeys)

// TenantWide reports whether op may act on a whole tenant (with an admin
// key and no principal in the request).
func TenantWide(op Op) bool { return tenantWide[op] }

// ErrForbidden is the error for a key whose role may not perform an
// operation.
func ErrForbidden(op Op) *memgate.Error {
	what, ok := opWords[op]
	if !ok {
		what = "perform " + string(op)
	}
	return &memgate.Error{Code: memgate.EFORBIDDEN, Message: "this API key's role may not " + what + " (operation " + string(op) + ")"}
}

// opWords says what each operation does, for ErrForbidden's message.
var opWords = map[Op]string{
	OpRemember: "remember memories",
	OpRecall:   "recall memories",
	OpList:     "list memories",
	OpGet:      "read memories",
	OpUpdate:   "update memories",
	OpRevoke:   "revoke memories",
	OpApprove:  "approve memories",
	OpReject:   "reject memories",
	OpFeedback: "give recall feedback",
	OpDelete:   "delete memories",
	OpForget:   "forget a principal",
	OpAudit:    "read the audit log",
	OpStats:    "read the statistics",
	OpImport:   "import memories",
	OpExport:   "export memories",
	OpKeys:     "manage API keys",
	OpWhoami:   "describe its own key",
	OpChat:     "chat",
}

// errOutsideKey is the error for a request field that names something
// outside the key's binding. It names the field and says nothing about
// what the field names (whether that tenant, principal or agent exists),
// so it is the same for every value outside the binding.
func errOutsideKey(field string) *memgate.Error {
	return &memgate.Error{Code: memgate.EFORBIDDEN, Field: field, Message: "is outside what the API key grants"}
}

// ScopeFor returns the scope a request may act in: the key's grant,
// narrowed by the request's fields. It is the only way a surface turns a
// request into a memgate.Scope, and it fails closed:
//
//   - The role must be allowed op (Allowed), or forbidden.
//   - Tenant always comes from the key. A request that names another
//     tenant is forbidden (field "tenant"), never served from the key's
//     tenant as if it had not asked and never answered with not_found:
//     the caller learns that its key does not reach there, which it knows
//     already, and nothing about the other tenant. An empty request tenant,
//     or the key's own, is fine.
//   - Principal: a key bound to a principal acts for it only; the request
//     may repeat it or leave it empty, anything else (another principal, or
//     AllPrincipals) is forbidden. An unbound key (admin, or an agent
//     serving several people) takes the principal from the request, which
//     is required, except that an admin may leave it empty on a tenant-wide
//     operation (list, stats, audit, export, import, keys), which then acts
//     on every principal (AllPrincipals). AllPrincipals in the request is
//     honoured only there too; elsewhere it is forbidden.
//   - Agent: a key bound to an agent acts as that agent only; the request
//     may repeat it or leave it empty, and the scope always carries the
//     key's agent (narrowing: that agent's memories and agent-wide ones).
//     Another agent is forbidden. An unbound key takes the request's agent.
//   - Conversation comes from the request (it only narrows).
//   - An agent key never reads a restricted memory: the scope of every
//     operation of an agent key has HideRestricted, so a restricted
//     memory answers like a missing one. A key bound to an agent changes
//     only its agent's memories: on the operations that change existing
//     memories (remember's supersedes, update, revoke, feedback) the scope
//     has ExactAgent. The request's own ExactAgent and HideRestricted are
//     kept (they only narrow).
//
// The result is validated (memgate.Scope.Validate): a malformed identifier
// in the request is invalid_argument. A nil key is unauthenticated.
func ScopeFor(k *memgate.Key, op Op, req memgate.Scope) (memgate.Scope, error) {
	if k == nil || k.Tenant == "" {
		return memgate.Scope{}, ErrUnauthenticated()
	}
	if !Allowed(k.Role, op) {
		return memgate.Scope{}, ErrForbidden(op)
	}
	if req.Tenant != "" && req.Tenant != k.Tenant {
		return memgate.Scope{}, errOutsideKey("tenant")
	}
	s := memgate.Scope{Tenant: k.Tenant, Conversation: req.Conversation}

	switch {
	case k.Principal != "":
		if req.AllPrincipals || (req.Principal != "" && req.Principal != k.Principal) {
			return memgate.Scope{}, errOutsideKey("principal")
		}
		s.Principal = k.Principal
	case k.Role == memgate.RoleUser:
		// A user key without a principal cannot be stored or minted; if
		// one appears anyway it grants nothing.
		return memgate.Scope{}, ErrUnauthenticated()
	case req.AllPrincipals:
		if req.Principal != "" {
			return memgate.Scope{}, memgate.FieldError("principal", "must be empty when all principals are requested")
		}
		if !tenantWideKey(k) || !TenantWide(op) {
			return memgate.Scope{}, errOutsideKey("principal")
		}
		s.AllPrincipals = true
	case req.Principal != "":
		s.Principal = req.Principal
	case tenantWideKey(k) && TenantWide(op):
		s.AllPrincipals = true
	default:
		return memgate.Scope{}, memgate.FieldError("principal", "is required")
	}

	switch {
	case k.Agent != "":
		if req.Agent != "" && req.Agent != k.Agent {
			return memgate.Scope{}, errOutsideKey("agent")
		}
		s.Agent = k.Agent
	default:
		s.Agent = req.Agent
	}
	s.HideRestricted = req.HideRestricted || k.Role == memgate.RoleAgent
	s.ExactAgent = req.ExactAgent || (k.Agent != "" && agentWrites[op])

	if err := s.Validate(); err != nil {
		return memgate.Scope{}, err
	}
	return s, nil
}
