package buildinfo

import (
	"runtime"
	"testing"
)

func TestGet(t *testing.T) {
	i := Get()
	if i.Version == "" || i.GoVersion != runtime.Version() {
		t.Fatalf("Get() = %+v", i)
	}
	if Get() != i {
		t.Fatal("Get is not stable")
	}
}

func TestString(t *testing.T) {
	for _, tc := range []struct {
		in   Info
		want string
	}{
		{Info{Version: "v0.3.0"}, "v0.3.0"},
		{Info{Version: "(devel)", Revision: "3f2a9c1d0b7e55aa"}, "(devel) (3f2a9c1d0b7e)"},
		{Info{Version: "v0.3.0", Revision: "abc", Modified: true}, "v0.3.0 (abc, modified)"},
	} {
		if got := tc.in.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.in, got, tc.want)
		}
	}
}
