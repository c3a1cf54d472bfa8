package httpapi_test

import (
	"context"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/sqlite"
)

func newAuthorizer(t *testing.T, db *sqlite.DB) *auth.Authorizer {
	t.Helper()
	return auth.New(db)
}

// mintKey creates a key directly through the store and returns its secret.
// sources, when given, are the sources it is granted (else its role's).
func mintKey(t *testing.T, db *sqlite.DB, tenant string, role memgate.Role, principal, agent string, sources ...memgate.Source) string {
	t.Helper()
	secret, k, err := auth.NewKey(memgate.Key{Tenant: tenant, Role: role, Principal: principal, Agent: agent, Name: "test", Sources: sources})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	return secret
}
