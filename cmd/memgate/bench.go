package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/internal/locomo"
	"github.com/memgate/memgate/sqlite"
)

func cmdBench(e env, args []string) error {
	if len(args) == 0 || args[0] != "locomo" {
		return usageError{"usage: memgate bench locomo [--data DIR] [--json] (speed: see BENCHMARKS.md)"}
	}
	var data string
	var asJSON bool
	var floors listFlag
	var minRecall, maxDrop, minSilence float64
	fs := newFlagSet("bench locomo", e.stderr, "[--data DIR] [--json] [--floors 0.2,0.22] [--min-recall10 X --max-floor-drop Y --min-silence Z]")
	fs.Var(&floors, "floors", "also sweep these floors (recall@10 and silence at each)")
	fs.Float64Var(&minRecall, "min-recall10", 0, "fail unless recall@10 with the floor off reaches this")
	fs.Float64Var(&maxDrop, "max-floor-drop", 1, "fail if recall@10 drops by more than this at the default floor")
	fs.Float64Var(&minSilence, "min-silence", 0, "fail unless foreign-query silence reaches this")
	fs.StringVar(&data, "data", "", "LoCoMo data directory (default: ../shared/bench/locomo beside the repository, or $MEMGATE_LOCOMO_DIR)")
	fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
	if _, err := parse(fs, args[1:]); err != nil {
		return err
	}
	if data == "" {
		d, err := locomo.Dir()
		if err != nil {
			return err
		}
		data = d
	}
	qs, err := locomo.LoadQuestions(data)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "memgate-locomo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	db, err := sqlite.Open(e.ctx, filepath.Join(tmp, "locomo.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	eng, err := engine.New(engine.Config{Store: db, Embedder: builtin.New()})
	if err != nil {
		return err
	}
	defer eng.Close()
	start := time.Now()
	imp, err := locomo.Import(e.ctx, eng, data)
	if err != nil {
		return err
	}
	ingest := time.Since(start)
	rep, err := locomo.Evaluate(e.ctx, eng, qs)
	if err != nil {
		return err
	}
	if len(floors) > 0 {
		var fl []float64
		for _, f := range floors {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil || v < 0 || v > 1 {
				return memgate.FieldError("floors", "must be numbers in [0, 1]")
			}
			fl = append(fl, v)
		}
		if rep.Sweep, err = locomo.Sweep(e.ctx, eng, qs, fl); err != nil {
			return err
		}
	}
	if asJSON {
		if err := writeJSON(e.stdout, rep); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.stdout, "LoCoMo dev split: %d memories imported in %v, %d questions, embedder %s\n\n", imp.Imported, ingest.Round(time.Millisecond), len(qs), builtin.Model)
		rep.WriteTable(e.stdout)
	}
	return rep.Check(minRecall, maxDrop, minSilence)
}
