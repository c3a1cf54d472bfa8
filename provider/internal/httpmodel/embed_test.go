package httpmodel

import (
	"encoding/json"
	"math"
	"testing"
)

func TestFloat(t *testing.T) {
	t.Parallel()
	var v []Float
	if err := json.Unmarshal([]byte(`[0.5, -2, 1e39, 1e-50]`), &v); err != nil {
		t.Fatal(err)
	}
	got := Vector(v)
	if got[0] != 0.5 || got[1] != -2 || !math.IsInf(float64(got[2]), 1) || got[3] != 0 {
		t.Fatalf("%v", got)
	}
	for _, bad := range []string{`[null]`, `["1"]`, `[true]`} {
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}
