package wire

import (
	"errors"
	"fmt"
	"testing"

	"github.com/memgate/memgate"
)

// TestStatusTable: every code maps to its status, and the table holds no
// other code.
func TestStatusTable(t *testing.T) {
	t.Parallel()
	want := map[string]int{
		"invalid_argument": 400, "unauthenticated": 401, "forbidden": 403, "not_found": 404,
		"method_not_allowed": 405, "conflict": 409, "too_large": 413, "policy_violation": 422,
		"rate_limited": 429, "unavailable": 503, "internal": 500,
	}
	if len(statusOf) != len(want) {
		t.Fatalf("the table has %d codes, want %d", len(statusOf), len(want))
	}
	for code, status := range want {
		if got, ok := Status(code); !ok || got != status {
			t.Errorf("%s → %d %v, want %d", code, got, ok, status)
		}
	}
	if _, ok := Status("made_up"); ok {
		t.Error("a code outside the table is in it")
	}
}

// TestDescribe: an error with a known code is described as it is, with
// its field; any other error is "internal error", with nothing of its
// detail, and marked internal (the control: a known code is not).
func TestDescribe(t *testing.T) {
	t.Parallel()
	d, status, internal := Describe(memgate.FieldError("memories[1].kind", "must be a string"))
	if want := (ErrorDetail{Code: memgate.EINVALID, Message: "memories[1].kind: must be a string", Field: "memories[1].kind"}); d != want || status != 400 || internal {
		t.Errorf("a field error: %+v %d %v", d, status, internal)
	}
	if d, status, _ := Describe(&memgate.Error{Code: memgate.EUNAVAILABLE}); d.Message != "Service Unavailable" || status != 503 {
		t.Errorf("an error without a message: %+v %d", d, status)
	}
	for _, err := range []error{
		fmt.Errorf("sqlite: disk I/O error at page 7: %w", errors.New("hidden-detail")),
		&memgate.Error{Code: "made_up", Message: "hidden-detail"},
		&memgate.Error{Code: memgate.EINTERNAL, Message: "hidden-detail"},
	} {
		d, status, internal := Describe(err)
		if d != (ErrorDetail{Code: memgate.EINTERNAL, Message: "internal error"}) || status != 500 || !internal {
			t.Errorf("%v: %+v %d %v", err, d, status, internal)
		}
	}
}
