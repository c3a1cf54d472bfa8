package main

import (
	"fmt"
	"strings"

	"github.com/memgate/memgate"
)

func cmdRecall(e env, args []string) error {
	var kinds, sources listFlag
	var minScore float64
	var asOf timeFlag
	var metadata string
	var req memgate.RecallRequest
	c, s := scoped(e, "recall", "--tenant T --principal P [flags] QUERY")
	fs := c.fs
	fs.IntVar(&req.K, "k", memgate.DefaultRecallK, fmt.Sprintf("maximum number of memories (at most %d)", memgate.MaxRecallK))
	fs.Float64Var(&minScore, "min-score", 0, "floor on the final score in [0, 1]; 0 turns it off (default: the measured default floor)")
	fs.Var(&kinds, "kind", "only these kinds")
	fs.Var(&sources, "source", "only these sources")
	fs.StringVar(&metadata, "metadata", "", "metadata equality filters as a JSON object")
	asOf.field = "as_of"
	fs.Var(&asOf, "as-of", "only memories valid at this time (RFC 3339; default now)")
	fs.BoolVar(&req.IncludeRestricted, "include-restricted", false, "include restricted memories")
	fs.IntVar(&req.BudgetChars, "budget-chars", 0, "maximum total characters of content returned (whole memories)")
	fs.BoolVar(&req.Diversify, "diversify", false, "reorder for diversity (MMR)")
	fs.BoolVar(&req.Explain, "explain", false, "show each score's components and what fell below the floor")
	fs.BoolVar(&req.Render, "render", false, "print the context block to paste into a prompt")
	check := func(pos []string) error {
		if len(pos) == 0 {
			return usageError{"missing QUERY"}
		}
		req.Scope, req.Query = s.scope(), strings.Join(pos, " ")
		if c.explicit("min-score") {
			req.MinScore = &minScore
		}
		if asOf.t != nil {
			req.AsOf = *asOf.t
		}
		req.Kinds, req.Sources = values[memgate.Kind](kinds), values[memgate.Source](sources)
		if metadata == "" {
			return nil
		}
		var err error
		req.Metadata, err = memgate.DecodeMetadata([]byte(metadata))
		return err
	}
	return runBackend(args, e, c, check,
		func(be backend) (*memgate.RecallResult, error) { return be.Recall(e.ctx, req) },
		func(res *memgate.RecallResult) error { printRecall(e, res, req.Render, req.Explain); return nil })
}

// printRecall prints a recall's context block (render), or its results
// with, on explain, each score's components and the figures of the recall.
func printRecall(e env, res *memgate.RecallResult, render, explain bool) {
	switch {
	case render:
		fmt.Fprintln(e.stdout, res.Context)
		return
	case len(res.Results) == 0:
		fmt.Fprintf(e.stdout, "nothing recalled (%d candidates below the floor %.2f)\n", res.BelowFloor, res.MinScore)
		return
	}
	header := "SCORE\tID\tKIND\tSOURCE\tCONTENT"
	if explain {
		header = "SCORE\tTEXT\tVECTOR\tCONTEXT\tID\tKIND\tCONTENT"
	}
	table(e.stdout, header, len(res.Results), func(i int) string {
		h := res.Results[i]
		m := h.Memory
		if explain {
			x := h.Explain
			return fmt.Sprintf("%.3f\t%.3f\t%.3f\t%.3f\t%s\t%s\t%s", h.Score, x.Text, x.Vector, x.Context, m.ID, m.Kind, preview(m.Content, 60))
		}
		return fmt.Sprintf("%.3f\t%s\t%s\t%s\t%s", h.Score, m.ID, m.Kind, m.Source, preview(m.Content, 70))
	})
	if explain {
		x := res.Explain
		fmt.Fprintf(e.stdout, "recall %s: %d proposed, %d ranked, %d below the floor %.2f, relatedness %.3f, %d µs\n",
			res.RecallID, x.Proposed, x.Ranked, x.BelowFloor, x.Floor, x.Relatedness, x.TookMicros)
	}
}
