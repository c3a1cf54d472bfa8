//go:build !race

package analysis

import "testing"

// The race detector allocates on its own, so allocation counts are checked
// without it: this file is left out of -race builds (scripts/test runs it
// in a pass of its own) rather than skipping there.

func TestTermsAllocations(t *testing.T) {
	text := "Melanie: We love painting together lately, especially nature-inspired ones. Here's our latest work from last weekend. [shares a photo]"
	allocs := testing.AllocsPerRun(100, func() { _ = Terms(text) })
	// tokenizer buffer, token ends, stem buffer, kept indexes, the two
	// result strings and the result slice.
	if allocs > 8 {
		t.Errorf("Terms allocates %.0f times per call, want at most 8", allocs)
	}
}
