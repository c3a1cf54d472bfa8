package engine_test

import (
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
)

// Explain names what relates a query word to the memory word it matched
// (the relation and path), which recall keeps only when explaining; and a
// recall without explain returns the same memories.
func TestExplainNamesRelatedWords(t *testing.T) {
	h := newHarness(t)
	h.remember(t, "acme", "alice", "Alice bought a new automobile last spring")
	h.remember(t, "acme", "alice", "Alice planted tomatoes by the south fence")
	off := 0.0
	req := engine.RecallRequest{Scope: scope("acme", "alice"), Query: "what car does she drive?", MinScore: &off, Explain: true}
	res, err := h.eng.Recall(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var rel []memgate.TermEvidence
	for _, hit := range res.Results {
		for _, ev := range hit.Explain.Evidence {
			if ev.Relation != "word" {
				rel = append(rel, ev)
			}
		}
	}
	if len(rel) == 0 || rel[0].Memory == rel[0].Query || rel[0].Relation == "" {
		t.Fatalf("no evidence names a related word: %+v", res.Results)
	}
	t.Logf("evidence: %+v", rel[0])
	req.Explain = false
	plain, err := h.eng.Recall(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Results) != len(res.Results) || plain.Results[0].Memory.ID != res.Results[0].Memory.ID {
		t.Fatalf("without explain: %d results, first %s; with: %d, first %s", len(plain.Results), plain.Results[0].Memory.ID, len(res.Results), res.Results[0].Memory.ID)
	}
}
