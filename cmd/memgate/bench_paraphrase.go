package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/internal/paraphrase"
	"github.com/memgate/memgate/sqlite"
)

// cmdBenchParaphrase is memgate bench paraphrase; args[0] is "paraphrase".
func cmdBenchParaphrase(e env, args []string) error {
	var b paraphraseBench
	var half, alone, distractors string
	fs := newFlagSet("bench paraphrase", e.stderr, "[--set dev|heldout] [--file F] [--half 1|2] [--embedders builtin,builtin:lexical-v1,glove-wire] [--json] [--misses] [--alone first=0.75,...] [--distractors first=0.60,...]")
	b.ef.register(fs)
	fs.StringVar(&b.set, "set", "dev", "the set of "+paraphrase.RepoDir+" to measure: dev or heldout (or $"+paraphrase.DirEnv+")")
	fs.StringVar(&b.file, "file", "", "a set file to measure instead of --set")
	fs.StringVar(&half, "half", "", "ask only one half of the people, in file order: 1 (the first half) or 2")
	fs.Var(&b.embedders, "embedders", "embedders to measure, each as --embedder takes it, or glove-wire: GloVe sentence vectors served over the OpenAI-compatible API by a loopback server (default: --embedder's)")
	fs.BoolVar(&b.asJSON, "json", false, "print the reports as JSON")
	fs.BoolVar(&b.misses, "misses", false, "print every question the default floor failed, with what came back")
	fs.StringVar(&alone, "alone", "", "fail unless the facts-only condition reaches these targets at the default floor: name=value list of first, top3, unrelated, swapped, offtopic (shares) and ride-along (a most), e.g. first=0.75,top3=0.85,unrelated=0.85,swapped=0.85,offtopic=1")
	fs.StringVar(&distractors, "distractors", "", "the same targets for the condition with distractors, e.g. first=0.60,top3=0.75,unrelated=0.80,swapped=0.80,offtopic=1")
	check := func(pos []string) error {
		if len(pos) > 0 {
			return usageError{"usage: memgate bench paraphrase takes no arguments (memgate bench paraphrase -h lists the flags)"}
		}
		switch half {
		case "":
		case "1", "2":
			b.half = int(half[0] - '0')
		default:
			return memgate.FieldError("half", "must be 1 or 2")
		}
		var err error
		if b.targets[paraphrase.Alone], err = paraphrase.ParseTargets("alone", alone); err != nil {
			return err
		}
		if b.targets[paraphrase.WithDistractors], err = paraphrase.ParseTargets("distractors", distractors); err != nil {
			return err
		}
		if b.file == "" {
			if b.file, err = paraphrase.SetPath(b.set); err != nil {
				return err
			}
		} else {
			b.set = strings.TrimSuffix(filepath.Base(b.file), ".json")
		}
		return nil
	}
	b.targets = map[paraphrase.Condition]paraphrase.Targets{}
	return runCommand(args[1:], e, command[any, struct{}]{fs: fs, check: check,
		call: func(any) (struct{}, error) { return struct{}{}, b.run(e) }})
}

// paraphraseBench is a run of memgate bench paraphrase, as its flags set it.
type paraphraseBench struct {
	set, file string
	half      int
	embedders listFlag
	ef        embedderFlags
	targets   map[paraphrase.Condition]paraphrase.Targets
	asJSON    bool
	misses    bool
}

// run measures the set with each embedder, printing a table a report
// (and the misses, with --misses), or every report as JSON at the end,
// and fails when a condition misses its targets.
func (b *paraphraseBench) run(e env) error {
	d, err := paraphrase.Load(b.file)
	if err != nil {
		return err
	}
	embedders := b.embedders
	if len(embedders) == 0 {
		embedders = listFlag{b.ef.spec}
	}
	var reports []*paraphrase.Report
	var failed []string
	for _, spec := range embedders {
		emb, done, err := benchEmbedder(b.ef, strings.TrimSpace(spec))
		if err != nil {
			return err
		}
		rep, took, err := b.measure(e, d, emb)
		done()
		if err != nil {
			return err
		}
		reports = append(reports, rep)
		if !b.asJSON {
			fmt.Fprintf(e.stdout, "paraphrase set %s, measured in %v\n", b.file, took.Round(time.Millisecond))
			rep.WriteTable(e.stdout)
			if b.misses {
				rep.WriteMisses(e.stdout)
			}
			fmt.Fprintln(e.stdout)
		}
		for _, c := range rep.Conditions {
			if err := c.Check(b.targets[c.Condition]); err != nil {
				failed = append(failed, fmt.Sprintf("paraphrase %s, %s: %v", rep.Set, rep.Embedder, err))
			}
		}
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

// measure evaluates the set with emb in a new database.
func (b *paraphraseBench) measure(e env, d *paraphrase.Data, emb memgate.Embedder) (*paraphrase.Report, time.Duration, error) {
	tmp, err := os.MkdirTemp("", "memgate-paraphrase-")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(tmp)
	db, err := sqlite.Open(e.ctx, filepath.Join(tmp, "paraphrase.db"))
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
	rep, err := paraphrase.Evaluate(e.ctx, eng, d, paraphrase.Options{Set: b.set, Half: b.half, Misses: b.misses})
	if err != nil {
		return nil, 0, err
	}
	if embs, err := emb.Embed(e.ctx, []string{"memgate"}); err == nil && len(embs) == 1 {
		rep.Embedder = embs[0].Provider + ":" + embs[0].Model
	}
	return rep, time.Since(start), nil
}
