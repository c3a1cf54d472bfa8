package engine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/sqlite"
)

// TestRelatedHeldSameRecall: leaving out the related words whose term the
// partition lacks (related's holds) changes nothing a recall returns:
// the same results, scores and explanations (with the related word and
// relation of each match), the same preview below the floor, for
// bench/load's questions and questions answered by related words only.
func TestRelatedHeldSameRecall(t *testing.T) {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e, err := New(Config{Store: db, Embedder: builtin.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := memgate.Scope{Tenant: "t", Principal: "p"}
	var rs []memgate.RememberRequest
	for i := range 300 {
		rng := rand.New(rand.NewPCG(1, uint64(i)))
		rs = append(rs, memgate.RememberRequest{Memory: memgate.Memory{Tenant: s.Tenant, Principal: s.Principal, Kind: memgate.KindMessage, Source: memgate.SourceUser,
			Conversation: fmt.Sprintf("session-%d", i/50), Content: loadSentence(rng) + " (turn " + letters(i) + ")"}})
	}
	for _, c := range []string{
		"Dana practised the cello for two hours before the concert.",
		"The children built a sandcastle at the beach.",
		"We ate grilled salmon with lemon at the harbour.",
		"Omar's physician prescribed penicillin for the infection.",
		"Greta bought new spectacles because she could not read the menu.",
		"They moved to Leeds for her new job at the hospital.",
	} {
		rs = append(rs, memgate.RememberRequest{Memory: memgate.Memory{Tenant: s.Tenant, Principal: s.Principal, Kind: memgate.KindFact, Source: memgate.SourceUser, Content: c}})
	}
	if _, err := e.RememberBatch(ctx, rs); err != nil {
		t.Fatal(err)
	}
	queries := []string{
		"Which instrument does Dana play?", "What did the kids do on holiday?", "What fish did we eat?",
		"What medication did Omar get?", "Does Greta need glasses?", "Which city did they move to?",
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for range 40 {
		queries = append(queries, loadQuestion(rng))
	}
	recall := func(q string, all bool) ([]byte, int) {
		e.relateAll = all
		res, err := e.Recall(ctx, RecallRequest{Scope: s, Query: q, K: 5, Explain: true, Preview: true})
		if err != nil {
			t.Fatal(err)
		}
		res.RecallID = ""
		if res.Explain != nil {
			res.Explain.TookMicros = 0
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		byRelated := 0
		for _, h := range append(res.Results, res.BelowFloorResults...) {
			if h.Explain == nil {
				continue
			}
			for _, ev := range h.Explain.Evidence {
				if ev.Relation != "" && ev.Relation != "word" {
					byRelated++
				}
			}
		}
		return b, byRelated
	}
	left, byRelated := 0, 0
	for _, q := range queries {
		all, _ := recall(q, true)
		held, n := recall(q, false)
		if string(all) != string(held) {
			t.Fatalf("%q: recall with every related word:\n%s\nwith the held ones:\n%s", q, all, held)
		}
		byRelated += n
		full := e.related(q, nil, false, nil)
		kept := e.related(q, nil, false, e.holds(ctx, s))
		left += len(full.words) - len(kept.words)
	}
	if left == 0 || byRelated == 0 {
		t.Fatalf("the test tests nothing: %d related words left out, %d matches by related words", left, byRelated)
	}
	t.Logf("%d related words left out over %d questions; %d matches by related words", left, len(queries), byRelated)
}
