package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/analysis"
	"github.com/memgate/memgate/index"
	"github.com/memgate/memgate/rank"
	"github.com/memgate/memgate/store"
)

// Calibration of the embedder (package rank, "Calibration"). A model's
// cosines are put on the scale every embedder shares by its embedding of
// the probe set (rank.Probes): the engine embeds the probes once per model,
// keeps them in the store (so every process over it, and every CLI run,
// calibrates the model with the same vectors and embeds the probes once),
// and from then on measures each query's cosines against the probes'
// background.

// Calibrate makes sure the embedder's current model is calibrated: it
// probes the embedder to learn its model if no embedding was seen yet,
// then reads the model's calibration from the store or makes it (one
// Embed call with the probe set, then PutCalibration). Recall does the
// same on first use; memgate serve calls it at startup so that the first
// recall does not pay for it. Without an embedder it does nothing.
func (e *Engine) Calibrate(ctx context.Context) error {
	if e.cfg.Embedder == nil {
		return nil
	}
	if e.rec.current().dim == 0 {
		if _, err := e.probeEmbedder(ctx); err != nil {
			return err
		}
	}
	_, _, err := e.calibration(ctx)
	return err
}

// calibration returns the current model and its calibration, making it if
// needed (see Calibrate). The calibration is nil when no model is known
// yet, or when the embedder answered the probes with another model (it
// changed meanwhile: the next recall calibrates that one).
func (e *Engine) calibration(ctx context.Context) (model, *rank.Calibration, error) {
	cur, cal := e.rec.state()
	if cal != nil || cur.dim == 0 || e.cfg.Embedder == nil {
		return cur, cal, nil
	}
	e.rec.calMu.Lock()
	defer e.rec.calMu.Unlock()
	if cur, cal = e.rec.state(); cal != nil || cur.dim == 0 {
		return cur, cal, nil
	}
	start := time.Now()
	stored, err := e.store.Calibration(ctx, cur.provider, cur.name, cur.dim, rank.ProbeVersion)
	made := false
	if memgate.ErrorCode(err) == memgate.ENOTFOUND {
		probes := rank.Probes()
		embs, err := e.cfg.Embedder.Embed(ctx, probes)
		if err != nil {
			return cur, nil, fmt.Errorf("embed the probe set: %w", err)
		}
		if len(embs) != len(probes) {
			return cur, nil, &memgate.Error{Code: memgate.EUNAVAILABLE, Message: fmt.Sprintf("embedder returned %d embeddings for %d probe texts", len(embs), len(probes))}
		}
		c := &store.Calibration{Provider: cur.provider, Model: cur.name, Dim: cur.dim, ProbeVersion: rank.ProbeVersion, CreatedAt: e.now()}
		for i := range embs {
			if err := embs[i].Check(); err != nil {
				return cur, nil, &memgate.Error{Code: memgate.EUNAVAILABLE, Message: "embedder returned an unusable probe vector: " + memgate.ErrorMessage(err)}
			}
			if !cur.matches(&embs[i]) {
				// The embedder changed model: calibrate that one next time.
				e.rec.observe(&embs[i])
				return e.rec.current(), nil, nil
			}
			c.Vectors = append(c.Vectors, embs[i].Vector)
		}
		if stored, err = e.store.PutCalibration(ctx, c); err != nil {
			return cur, nil, fmt.Errorf("store the calibration: %w", err)
		}
		made = true
	} else if err != nil {
		return cur, nil, fmt.Errorf("read the calibration: %w", err)
	}
	cal, err = rank.NewCalibration(stored.Vectors)
	if err != nil {
		return cur, nil, &memgate.Error{Code: memgate.EUNAVAILABLE, Message: fmt.Sprintf("the embedder %s/%s cannot be calibrated: %v", cur.provider, cur.name, err)}
	}
	e.rec.calibrated(cur, cal)
	e.log.InfoContext(ctx, "embedder calibrated", "provider", cur.provider, "model", cur.name, "dim", cur.dim,
		"probes", len(stored.Vectors), "embedded", made, "took", time.Since(start))
	return cur, cal, nil
}

// probeCount is len(rank.Probes()), which parses the probe set: once.
var probeCount = sync.OnceValue(func() int { return len(rank.Probes()) })

// queryVectors are a recall's query vector and what ranking needs of it.
type queryVectors struct {
	model      model
	provenance *Provenance
	calibrated bool
	probes     int
	// background is the content query vector's (zero without a calibrated
	// vector), and null the model's null distribution of z-scores.
	background rank.Background
	null       *rank.Null
}

// queryVectors finds the query's identifying terms (q.Exclude), embeds the
// content query (the query without them: see package rank, "Names are not
// evidence") into q.Vector, and measures its background by the model's
// calibration. The partition is caught up to head first, so the terms are
// judged on what the search will see. A query that is nothing but
// identifying terms has no vector.
func (e *Engine) queryVectors(ctx context.Context, s memgate.Scope, query string, q *index.Query, head int64) (queryVectors, error) {
	var out queryVectors
	if e.cfg.Embedder != nil && e.rec.current().dim == 0 {
		// The first recall of the process learns the model first, so that
		// the partition is loaded with vectors.
		if _, err := e.embedQueries(ctx, query); err != nil {
			return out, err
		}
	}
	// The first recall of a model calibrates it while the partition is
	// caught up (loaded, when it is not resident: DFs loads it): neither
	// needs the other, and both take milliseconds.
	cur, cal := e.rec.state()
	calibrate := func() (model, *rank.Calibration, error) { return cur, cal, nil }
	if cal == nil && cur.dim > 0 && e.cfg.Embedder != nil {
		type calibrated struct {
			cur model
			cal *rank.Calibration
			err error
		}
		done := make(chan calibrated, 1)
		go func() {
			cur, cal, err := e.calibration(ctx)
			done <- calibrated{cur, cal, err}
		}()
		calibrate = func() (model, *rank.Calibration, error) {
			c := <-done
			return c.cur, c.cal, c.err
		}
	}
	terms := slices.Compact(slices.Sorted(slices.Values(q.Terms)))
	var (
		n   int
		df  []int
		err error
	)
	if err = e.catchUp(ctx, s.Tenant, s.Principal, head); err == nil {
		if n, df, err = e.rec.idx.DFs(ctx, s.Tenant, s.Principal, terms); err != nil {
			err = fmt.Errorf("read term statistics: %w", err)
		}
	}
	cur, cal, calErr := calibrate()
	if calErr != nil {
		return out, calErr
	}
	if err != nil {
		return out, err
	}
	// The principal's own name identifies the partition whatever its
	// size; other terms by their share of its memories.
	own := analysis.Terms(s.Principal)
	for i, t := range terms {
		if rank.Identifying(n, df[i]) || slices.Contains(own, t) {
			q.Exclude = append(q.Exclude, t)
		}
	}
	content := query
	if len(q.Exclude) > 0 {
		content = analysis.FoldWithout(query, func(t string) bool { return slices.Contains(q.Exclude, t) })
	}
	out.model = cur
	if e.cfg.Embedder == nil || strings.TrimSpace(content) == "" {
		return out, nil
	}
	embs, err := e.embedQueries(ctx, content)
	if err != nil {
		return out, err
	}
	if e.rec.current() != cur {
		// The embedder changed model since the calibration: this recall
		// ranks by text; the next one calibrates the new model.
		cur, cal = e.rec.current(), nil
	}
	out.model = cur
	out.provenance = &Provenance{Provider: cur.provider, Model: cur.name, Dim: cur.dim}
	q.Vector = embs[0].Vector
	if cal == nil {
		return out, nil
	}
	out.background = cal.Background(q.Vector)
	out.null = cal.Null()
	out.calibrated, out.probes = true, probeCount()
	return out, nil
}

// embedQueries embeds query texts and checks what comes back; the
// provenance is observed (a new model drops the index and calibration).
func (e *Engine) embedQueries(ctx context.Context, texts ...string) ([]memgate.Embedding, error) {
	embs, err := e.cfg.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	if len(embs) != len(texts) {
		return nil, &memgate.Error{Code: memgate.EUNAVAILABLE, Message: "embedder returned an unusable query vector"}
	}
	for i := range embs {
		if embs[i].Check() != nil || embs[i].Provider != embs[0].Provider || embs[i].Model != embs[0].Model || embs[i].Dim != embs[0].Dim {
			return nil, &memgate.Error{Code: memgate.EUNAVAILABLE, Message: "embedder returned an unusable query vector"}
		}
	}
	e.rec.observe(&embs[0])
	return embs, nil
}
