package paraphrase

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/memgate/memgate"
)

// Targets are the figures one condition must reach at the default floor;
// a negative field is not checked.
type Targets struct {
	First     float64 // targeted questions whose first result is an answer
	Top3      float64 // targeted questions with an answer among the first three
	Unrelated float64 // unrelated silence
	Swapped   float64 // name-swapped silence
	Offtopic  float64 // off-topic silence
	RideAlong float64 // at most this many results that are not answers
}

// targetNames are the names ParseTargets takes, in the order it lists them.
var targetNames = []string{"first", "top3", "unrelated", "swapped", "offtopic", "ride-along"}

// NoTargets checks nothing.
var NoTargets = Targets{-1, -1, -1, -1, -1, -1}

func (t *Targets) field(name string) *float64 {
	switch name {
	case "first":
		return &t.First
	case "top3":
		return &t.Top3
	case "unrelated":
		return &t.Unrelated
	case "swapped":
		return &t.Swapped
	case "offtopic":
		return &t.Offtopic
	case "ride-along":
		return &t.RideAlong
	}
	return nil
}

// ParseTargets reads a list of name=value targets ("first=0.75,top3=0.85")
// given as the flag field; the names are targetNames, each at most once;
// a share is in [0, 1], ride-along at least 0. An empty list checks
// nothing. Errors name field.
func ParseTargets(field, s string) (Targets, error) {
	t := NoTargets
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		p := t.field(name)
		switch {
		case !ok:
			return NoTargets, memgate.FieldError(field, "%q is not name=value", part)
		case p == nil:
			return NoTargets, memgate.FieldError(field, "unknown target %q (one of %s)", name, strings.Join(targetNames, ", "))
		case seen[name]:
			return NoTargets, memgate.FieldError(field, "names %s twice", name)
		}
		seen[name] = true
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		bad := err != nil || math.IsNaN(v) || v < 0
		switch {
		case name == "ride-along" && (bad || v > K):
			return NoTargets, memgate.FieldError(field, "ride-along must be a number in [0, %d]", K)
		case name != "ride-along" && (bad || v > 1):
			return NoTargets, memgate.FieldError(field, "%s must be a share in [0, 1]", name)
		}
		*p = v
	}
	return t, nil
}

// Check returns an error naming every target the condition misses at the
// default floor, or nil.
func (c *ConditionReport) Check(t Targets) error {
	f := c.AtFloor
	var miss []string
	for _, m := range []struct {
		name      string
		got, want float64
	}{
		{"first", f.Targeted.First, t.First},
		{"top3", f.Targeted.Top3, t.Top3},
		{"unrelated silence", f.Unrelated.Silent, t.Unrelated},
		{"name-swapped silence", f.Swapped.Silent, t.Swapped},
		{"off-topic silence", f.Offtopic.Silent, t.Offtopic},
	} {
		if m.want >= 0 && m.got < m.want {
			miss = append(miss, fmt.Sprintf("%s %.3f, below %.3f", m.name, m.got, m.want))
		}
	}
	if t.RideAlong >= 0 && f.RideAlongN > 0 && f.RideAlong > t.RideAlong {
		miss = append(miss, fmt.Sprintf("ride-along %.2f, more than %.2f", f.RideAlong, t.RideAlong))
	}
	if len(miss) > 0 {
		return fmt.Errorf("%s: targets missed: %s", c.Condition, strings.Join(miss, "; "))
	}
	return nil
}
