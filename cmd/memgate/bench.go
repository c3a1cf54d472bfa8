package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/internal/glovewire"
	"github.com/memgate/memgate/internal/locomo"
	"github.com/memgate/memgate/provider/openai"
	"github.com/memgate/memgate/sqlite"
)

func cmdBench(e env, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "locomo":
			return cmdBenchLocomo(e, args)
		case "paraphrase":
			return cmdBenchParaphrase(e, args)
		}
	}
	return usageError{"usage: memgate bench locomo [--data DIR] [--set turns,facts] [--json] | memgate bench paraphrase [--set dev|heldout] [--json] (speed: see BENCHMARKS.md)"}
}

// cmdBenchLocomo is memgate bench locomo; args[0] is "locomo".
func cmdBenchLocomo(e env, args []string) error {
	var b locomoBench
	var half string
	var floors, sets listFlag
	ef, t := &b.ef, &b.targets
	fs := newFlagSet("bench locomo", e.stderr, "[--data DIR] [--set turns,facts] [--half 1|2] [--embedders builtin,builtin:lexical-v1,glove-wire] [--json] [--floors 0.2,0.22] [targets]")
	ef.register(fs)
	fs.Var(&sets, "set", "memory sets to measure: turns, facts (default both)")
	fs.Var(&b.embedders, "embedders", "embedders to measure, each as --embedder takes it, or glove-wire: GloVe sentence vectors served over the OpenAI-compatible API by a loopback server (default: --embedder's)")
	fs.StringVar(&half, "half", "", "ask only the questions of one half of the conversations: 1 (conv-26, conv-30) or 2 (conv-41, conv-42)")
	fs.Var(&floors, "floors", "also sweep these floors (recall@10, silences and injected at each)")
	fs.Float64Var(&t.MinRecall10, "min-recall10", 0, "fail unless recall@10 with the floor off reaches this (every set)")
	fs.Float64Var(&t.MinRecall5, "min-recall5", 0, "fail unless recall@5 with the floor off reaches this (every set)")
	fs.Float64Var(&t.MaxFloorDrop, "max-floor-drop", 0, "fail if recall@10 drops by more than this at the default floor")
	fs.Float64Var(&t.MinSilence, "min-silence", 0, "fail unless foreign-query silence reaches this")
	fs.Float64Var(&t.MinSwapped, "min-swapped", 0, "fail unless name-swapped silence reaches this")
	fs.Float64Var(&t.MaxInjected, "max-injected", 0, "fail if more results than this are injected per own question")
	fs.StringVar(&b.data, "data", "", "LoCoMo data directory (default: the repository's "+locomo.RepoDir+", or $"+locomo.DirEnv+")")
	fs.BoolVar(&b.asJSON, "json", false, "print the reports as JSON")
	opts := &b.opts
	check := func([]string) error {
		if b.data == "" {
			d, err := locomo.Dir()
			if err != nil {
				return err
			}
			b.data = d
		}
		switch half {
		case "":
		case "1", "2":
			opts.Principals = locomo.Halves[int(half[0]-'1')]
		default:
			return memgate.FieldError("half", "must be 1 or 2")
		}
		for _, f := range floors {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil || v < 0 || v > 1 {
				return memgate.FieldError("floors", "must be numbers in [0, 1]")
			}
			opts.Floors = append(opts.Floors, v)
		}
		b.sets = locomo.Sets
		if len(sets) > 0 {
			b.sets = nil
			for _, s := range sets {
				set, err := locomo.ParseSet(strings.TrimSpace(s))
				if err != nil {
					return memgate.FieldError("set", "%v", err)
				}
				b.sets = append(b.sets, set)
			}
		}
		return nil
	}
	return runCommand(args[1:], e, command[any, struct{}]{fs: fs, check: check,
		call: func(any) (struct{}, error) { return struct{}{}, b.run(e) }})
}

// locomoBench is a run of memgate bench locomo, as its flags set it.
type locomoBench struct {
	data      string
	sets      []locomo.Set
	embedders listFlag
	ef        embedderFlags
	opts      locomo.Options
	targets   locomo.Targets
	asJSON    bool
}

// run measures each set with each embedder, printing a table a report
// (or, with asJSON, every report as JSON at the end), and fails when a
// report misses the targets.
func (b *locomoBench) run(e env) error {
	d, err := locomo.Load(b.data)
	if err != nil {
		return err
	}
	embedders := b.embedders
	if len(embedders) == 0 {
		embedders = listFlag{b.ef.spec}
	}
	var reports []*locomo.Report
	var failed []string
	for _, spec := range embedders {
		emb, done, err := benchEmbedder(b.ef, strings.TrimSpace(spec))
		if err != nil {
			return err
		}
		for _, set := range b.sets {
			rep, ingest, err := benchSet(e, d, set, emb, b.opts)
			if err != nil {
				done()
				return err
			}
			reports = append(reports, rep)
			if !b.asJSON {
				fmt.Fprintf(e.stdout, "LoCoMo dev split, imported in %v\n", ingest.Round(time.Millisecond))
				rep.WriteTable(e.stdout)
				fmt.Fprintln(e.stdout)
			}
			if err := rep.Check(b.targets); err != nil {
				failed = append(failed, err.Error())
			}
		}
		done()
	}
	if b.asJSON {
		if err := writeJSON(e.stdout, reports); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%s", strings.Join(failed, "\n"))
	}
	return nil
}

// benchEmbedder returns the embedder spec names (see --embedders) and a
// function that releases it.
func benchEmbedder(ef embedderFlags, spec string) (memgate.Embedder, func(), error) {
	if spec == "glove-wire" {
		srv := glovewire.Start()
		emb, err := openai.NewEmbedder(openai.EmbedderConfig{Model: glovewire.Model, URL: srv.URL + "/v1"})
		if err != nil {
			srv.Close()
			return nil, nil, err
		}
		return emb, srv.Close, nil
	}
	ef.spec = spec
	emb, err := ef.embedder()
	return emb, func() {}, err
}

// benchSet imports one set into a new database and evaluates it.
func benchSet(e env, d *locomo.Data, set locomo.Set, emb memgate.Embedder, opts locomo.Options) (*locomo.Report, time.Duration, error) {
	tmp, err := os.MkdirTemp("", "memgate-locomo-")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(tmp)
	db, err := sqlite.Open(e.ctx, filepath.Join(tmp, "locomo.db"))
	if err != nil {
		return nil, 0, err
	}
	defer db.Close()
	eng, err := engine.New(engine.Config{Store: db, Embedder: emb})
	if err != nil {
		return nil, 0, err
	}
	defer eng.Close()
	start := time.Now()
	if _, err := locomo.Import(e.ctx, eng, d.Dir, set); err != nil {
		return nil, 0, err
	}
	ingest := time.Since(start)
	rep, err := locomo.Evaluate(e.ctx, eng, d, set, opts)
	if err != nil {
		return nil, 0, err
	}
	if embs, err := emb.Embed(e.ctx, []string{"memgate"}); err == nil && len(embs) == 1 {
		rep.Embedder = embs[0].Provider + ":" + embs[0].Model
	}
	return rep, ingest, nil
}
