package httpapi

import (
	"net/http"

	"github.com/memgate/memgate"
)

// keyInput is the body of POST /v1/keys: the new key's template. The id,
// secret and times are the server's; tenant, when given, must be the key's.
type keyInput struct {
	Tenant    string   `json:"tenant"`
	Role      string   `json:"role"`
	Principal string   `json:"principal"`
	Agent     string   `json:"agent"`
	Name      string   `json:"name"`
	Sources   []string `json:"sources"`
}

// createdKey is the response of POST /v1/keys: the record and its secret,
// shown this once.
type createdKey struct {
	Key    *memgate.Key `json:"key"`
	Secret string       `json:"secret"`
}

// keyList is the response of GET /v1/keys.
type keyList struct {
	Keys []*memgate.Key `json:"keys"`
}

// createKey mints a key in the caller's tenant (an admin key's): 201 with
// the secret, which is never shown again.
func (s *server) createKey(c *call) error {
	tenant, err := c.keysTenant()
	if err != nil {
		return err
	}
	var in keyInput
	if err := c.decodeBody(&in, false); err != nil {
		return err
	}
	role, err := memgate.ParseRole(in.Role)
	if err == nil && tenant != "" && in.Tenant != "" && in.Tenant != tenant {
		err = memgate.FieldError("tenant", "names two tenants (query and body)")
	}
	if err != nil {
		return err
	}
	if len(in.Sources) > len(memgate.Sources) {
		return memgate.FieldError("sources", "holds %d sources; there are only %d", len(in.Sources), len(memgate.Sources))
	}
	if in.Tenant == "" {
		in.Tenant = tenant
	}
	t := memgate.Key{Tenant: in.Tenant, Role: role, Principal: in.Principal, Agent: in.Agent, Name: in.Name}
	for _, src := range in.Sources {
		t.Sources = append(t.Sources, memgate.Source(src))
	}
	secret, k, err := c.sess.CreateKey(c.ctx, t)
	if err != nil {
		return err
	}
	writeJSON(c.w, http.StatusCreated, createdKey{Key: k, Secret: secret})
	return nil
}

// listKeys answers every key of the caller's tenant, revoked ones
// included, oldest first: records without hashes or secrets.
func (s *server) listKeys(c *call) error {
	if _, err := c.keysTenant(); err != nil {
		return err
	}
	ks, err := c.sess.ListKeys(c.ctx)
	if err != nil {
		return err
	}
	writeJSON(c.w, http.StatusOK, keyList{Keys: ks})
	return nil
}

// revokeKey revokes a key of the caller's tenant; another tenant's key is
// not_found, like a missing one.
func (s *server) revokeKey(c *call) error {
	if _, err := c.keysTenant(); err != nil {
		return err
	}
	var in struct{}
	if err := c.decodeBody(&in, true); err != nil {
		return err
	}
	k, err := c.sess.RevokeKey(c.ctx, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(c.w, http.StatusOK, k)
	return nil
}

// keysTenant reads the optional tenant of a keys request's query string:
// empty or the key's own (403 otherwise, before anything is read).
func (c *call) keysTenant() (string, error) {
	q, err := parseQuery(c.r, []string{"tenant"}, nil)
	if err != nil {
		return "", err
	}
	t := q.get("tenant")
	if _, err := c.sess.Scope(c.op, memgate.Scope{Tenant: t}); err != nil {
		return "", err
	}
	return t, nil
}
