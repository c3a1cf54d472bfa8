package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/memgate/memgate"
)

// TestUnavailableIsLoggedWithItsCause: a 503's log line says which fault
// it was (here a closed database), beside the code; a 200 has no cause.
func TestUnavailableIsLoggedWithItsCause(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	admin := h.key("acme", memgate.RoleAdmin, "", "")
	h.do("GET", "/v1/stats", admin, nil).want(t, http.StatusOK)
	if strings.Contains(h.logs.String(), `"cause"`) {
		t.Fatalf("a 200 logged a cause:\n%s", h.logs.String())
	}
	h.db.Close()
	h.do("GET", "/v1/stats", admin, nil).wantError(t, http.StatusServiceUnavailable, memgate.EUNAVAILABLE, "")
	if logs := h.logs.String(); !strings.Contains(logs, `"code":"unavailable","cause":"the database is closed"`) {
		t.Fatalf("the 503 log line lacks its cause:\n%s", logs)
	}
}
