package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/postgres/pgtest"
)

func TestKeysCreateListRevoke(t *testing.T) {
	t.Parallel()
	db := newDB(t)

	// Text mode: the secret alone on stdout, the id on stderr.
	code, out, errs := cli(t, db, "", "keys", "create", "--tenant", "acme", "--role", "agent", "--principal", "alice", "--agent", "helper", "--name", "support bot")
	if code != 0 {
		t.Fatalf("keys create: exit %d: %s", code, errs)
	}
	secret := strings.TrimSpace(out)
	if !secretRE.MatchString(secret) || len(secret) != auth.SecretLen {
		t.Fatalf("keys create printed %q, want the secret alone", out)
	}
	if !strings.Contains(errs, "shown only this once") || strings.Contains(errs, secret) {
		t.Fatalf("keys create's note: %q", errs)
	}

	var made CreatedKey
	if err := json.Unmarshal([]byte(mustCLI(t, db, "keys", "create", "--tenant", "acme", "--role", "user", "--principal", "bob", "--json")), &made); err != nil {
		t.Fatal(err)
	}
	if made.Key == nil || !secretRE.MatchString(made.Secret) || made.Key.Role != "user" || made.Key.Principal != "bob" {
		t.Fatalf("keys create --json: %+v", made)
	}
	mustCLI(t, db, "keys", "create", "--tenant", "globex", "--role", "admin")

	// list shows the tenant's keys only, and neither secrets nor hashes.
	list := mustCLI(t, db, "keys", "list", "--tenant", "acme", "--json")
	for _, leak := range []string{secret, made.Secret, auth.Hash(secret), auth.Hash(made.Secret), "hash"} {
		if strings.Contains(list, leak) {
			t.Fatalf("keys list shows %q:\n%s", leak, list)
		}
	}
	var keys struct {
		Keys []struct {
			ID, Tenant, Role, Principal, Agent, Name string
			RevokedAt                                *string `json:"revoked_at"`
		} `json:"keys"`
	}
	if err := json.Unmarshal([]byte(list), &keys); err != nil {
		t.Fatal(err)
	}
	if len(keys.Keys) != 2 || keys.Keys[0].Agent != "helper" || keys.Keys[0].Name != "support bot" || keys.Keys[1].ID != made.Key.ID {
		t.Fatalf("keys list acme: %s", list)
	}
	for _, k := range keys.Keys {
		if k.Tenant != "acme" || k.RevokedAt != nil {
			t.Fatalf("keys list acme: %s", list)
		}
	}
	if text := mustCLI(t, db, "keys", "list", "--tenant", "acme"); !strings.Contains(text, made.Key.ID) || !strings.Contains(text, "support bot") {
		t.Fatalf("keys list (text):\n%s", text)
	}

	// Revoking from another tenant answers like a missing key and changes
	// nothing; the owner's revoke works and is idempotent.
	code, _, errs = cli(t, db, "", "keys", "revoke", "--tenant", "globex", made.Key.ID)
	if code != 1 || !strings.Contains(errs, "not_found: key not found") {
		t.Fatalf("keys revoke from another tenant: exit %d: %s", code, errs)
	}
	_, _, missing := cli(t, db, "", "keys", "revoke", "--tenant", "globex", "key_0000000000000000")
	if missing != errs {
		t.Fatalf("another tenant's key %q and a missing key %q answer differently", errs, missing)
	}
	if !strings.Contains(mustCLI(t, db, "keys", "list", "--tenant", "acme"), "support bot") {
		t.Fatal("control: list lost a key")
	}
	for range 2 {
		if out := mustCLI(t, db, "keys", "revoke", "--tenant", "acme", made.Key.ID); out != made.Key.ID+" revoked\n" {
			t.Fatalf("keys revoke: %q", out)
		}
	}
	if !strings.Contains(mustCLI(t, db, "keys", "list", "--tenant", "acme", "--json"), `"revoked_at"`) {
		t.Fatal("keys list does not show the revocation")
	}
}

func TestKeysRefuseBadInput(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	for _, tc := range []exitCase{
		{[]string{"keys"}, 2, "missing subcommand"},
		{[]string{"keys", "rotate"}, 2, "unknown subcommand"},
		{[]string{"keys", "create", "--role", "admin"}, 1, "tenant: is required"},
		{[]string{"keys", "create", "--tenant", "acme"}, 1, "role: is required"},
		{[]string{"keys", "create", "--tenant", "acme", "--role", "root"}, 1, "unknown role"},
		{[]string{"keys", "create", "--tenant", "acme", "--role", "user"}, 1, "principal: is required for a user key"},
		{[]string{"keys", "create", "--tenant", "acme", "--role", "user", "--principal", "bob", "--agent", "a"}, 1, "agent: only an agent key"},
		{[]string{"keys", "create", "--tenant", "acme", "--role", "admin", "--principal", "bob"}, 1, "principal: an admin key is tenant-wide"},
		{[]string{"keys", "create", "--tenant", "acme", "--role", "admin", "extra"}, 2, "no arguments"},
		{[]string{"keys", "list"}, 1, "tenant: is required"},
		{[]string{"keys", "revoke", "--tenant", "acme"}, 2, "exactly one key ID"},
	} {
		code, out, errs := cli(t, db, "", tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) || secretRE.MatchString(out) {
			t.Errorf("memgate %v: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, out, errs, tc.code, tc.want)
		}
	}
	// Nothing was created by the refused commands.
	if out := mustCLI(t, db, "keys", "list", "--tenant", "acme", "--json"); !strings.Contains(out, `"keys": []`) {
		t.Fatalf("refused creates stored keys: %s", out)
	}
}

// TestKeysRemote: keys are managed through a server with an admin key
// (the server's /v1/keys): create with a role, a binding and granted
// sources, list, revoke; the revoked key is refused at once. A key that is
// not an admin's may not, and another tenant's key id is not found.
func TestKeysRemote(t *testing.T) {
	s, db, admin := serverKey(t)
	u := s.url

	var made CreatedKey
	out := mustRemote(t, u, "keys", "create", "--role", "agent", "--principal", "alice", "--agent", "helper", "--sources", "user,assistant", "--name", "relay", "--json")
	if err := json.Unmarshal([]byte(out), &made); err != nil || made.Key == nil || !secretRE.MatchString(made.Secret) {
		t.Fatalf("keys create --server: %s", out)
	}
	if made.Key.Tenant != "default" || made.Key.Role != "agent" || made.Key.Agent != "helper" || len(made.Key.Sources) != 2 {
		t.Fatalf("keys create --server made %+v", made.Key)
	}
	// The same record is in the server's database, seen locally.
	if list := mustCLI(t, db, "keys", "list", "--tenant", "default"); !strings.Contains(list, made.Key.ID) || !strings.Contains(list, "user,assistant") {
		t.Fatalf("local keys list lacks the remote key:\n%s", list)
	}
	list := mustRemote(t, u, "keys", "list", "--json")
	if !strings.Contains(list, made.Key.ID) || strings.Contains(list, made.Secret) || strings.Contains(list, "hash") {
		t.Fatalf("keys list --server: %s", list)
	}
	// The new key works until it is revoked.
	t.Setenv(apiKeyEnv, made.Secret)
	if code, _, errs := remote(t, u, "", "list", "--principal", "alice"); code != 0 {
		t.Fatalf("the new key: exit %d %s", code, errs)
	}
	// It is not an admin's: it may not manage keys.
	if code, _, errs := remote(t, u, "", "keys", "list"); code != 1 || !strings.Contains(errs, "forbidden") {
		t.Fatalf("keys list with an agent key: exit %d %q", code, errs)
	}
	t.Setenv(apiKeyEnv, admin)
	if out := mustRemote(t, u, "keys", "revoke", made.Key.ID); out != made.Key.ID+" revoked\n" {
		t.Fatalf("keys revoke --server: %q", out)
	}
	t.Setenv(apiKeyEnv, made.Secret)
	if code, _, errs := remote(t, u, "", "list", "--principal", "alice"); code != 1 || !strings.Contains(errs, "unauthenticated") {
		t.Fatalf("the revoked key: exit %d %q", code, errs)
	}
	t.Setenv(apiKeyEnv, admin)
	// Another tenant's key (made locally) is not found, like a missing id.
	other := mustCLI(t, db, "keys", "create", "--tenant", "globex", "--role", "admin", "--json")
	var og CreatedKey
	if err := json.Unmarshal([]byte(other), &og); err != nil {
		t.Fatal(err)
	}
	_, _, foreign := remote(t, u, "", "keys", "revoke", og.Key.ID)
	_, _, missing := remote(t, u, "", "keys", "revoke", "key_0000000000000000")
	if !strings.Contains(foreign, "not_found") || strings.ReplaceAll(foreign, og.Key.ID, "X") != strings.ReplaceAll(missing, "key_0000000000000000", "X") {
		t.Fatalf("another tenant's key: %q; a missing one: %q", foreign, missing)
	}
	// --tenant may repeat the key's, never name another.
	if code, _, errs := remote(t, u, "", "keys", "list", "--tenant", "globex"); code != 1 || !strings.Contains(errs, "forbidden") {
		t.Fatalf("keys list --tenant globex: exit %d %q", code, errs)
	}
	mustRemote(t, u, "keys", "list", "--tenant", "default")
}

// TestKeysOnPostgres: keys are managed on a PostgreSQL database as on a
// SQLite file (a replica deployment revokes a leaked key in one
// command): create, list (without secrets), revoke, and another tenant's
// key id refused like a missing one.
func TestKeysOnPostgres(t *testing.T) {
	t.Parallel()
	pg := pgtest.SchemaURL(t)
	code, out, errs := runMemgate("keys", "create", "--postgres", pg, "--tenant", "acme", "--role", "agent", "--principal", "alice", "--sources", "assistant,user", "--json")
	if code != 0 {
		t.Fatalf("keys create --postgres: exit %d: %s", code, errs)
	}
	var made CreatedKey
	if err := json.Unmarshal([]byte(out), &made); err != nil || made.Key == nil || !secretRE.MatchString(made.Secret) {
		t.Fatalf("keys create --postgres --json: %q (%v)", out, err)
	}
	if fmt.Sprint(made.Key.Sources) != "[assistant user]" {
		t.Fatalf("granted sources %v", made.Key.Sources)
	}
	if code, _, errs := runMemgate("keys", "create", "--postgres", pg, "--tenant", "globex", "--role", "admin"); code != 0 {
		t.Fatalf("keys create globex: %s", errs)
	}
	code, list, errs := runMemgate("keys", "list", "--postgres", pg, "--tenant", "acme", "--json")
	if code != 0 || !strings.Contains(list, made.Key.ID) || strings.Contains(list, made.Secret) || strings.Contains(list, auth.Hash(made.Secret)) {
		t.Fatalf("keys list --postgres: exit %d %q %s", code, list, errs)
	}
	// Another tenant's revoke of the key: like a missing id, and the key
	// stays unrevoked (the control below revokes it).
	code, _, foreign := runMemgate("keys", "revoke", "--postgres", pg, "--tenant", "globex", made.Key.ID)
	_, _, missing := runMemgate("keys", "revoke", "--postgres", pg, "--tenant", "globex", "key_0000000000000000")
	if code == 0 || strings.ReplaceAll(foreign, made.Key.ID, "ID") != strings.ReplaceAll(missing, "key_0000000000000000", "ID") {
		t.Fatalf("foreign revoke: exit %d %q; missing: %q", code, foreign, missing)
	}
	if code, _, errs := runMemgate("keys", "revoke", "--postgres", pg, "--tenant", "acme", made.Key.ID); code != 0 {
		t.Fatalf("keys revoke --postgres: exit %d: %s", code, errs)
	}
	_, list, _ = runMemgate("keys", "list", "--postgres", pg, "--tenant", "acme", "--json")
	if !strings.Contains(list, `"revoked_at"`) {
		t.Fatalf("after revoke the list shows no revocation: %s", list)
	}
}
