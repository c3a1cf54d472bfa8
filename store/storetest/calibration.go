package storetest

import (
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

var calibrationTests = []test{
	{"RoundTrip", testCalibrationRoundTrip},
	{"FirstWriterWins", testCalibrationFirstWins},
	{"ConcurrentPuts", testCalibrationConcurrent},
	{"RefusesInvalid", testCalibrationInvalid},
}

func calibration(model string, dim, n int, seed float32) *store.Calibration {
	c := &store.Calibration{Provider: "openai", Model: model, Dim: dim, ProbeVersion: "probes-v1", CreatedAt: t1}
	for i := range n {
		v := make([]float32, dim)
		for j := range v {
			v[j] = seed + float32(i)*0.5 - float32(j)*1e-7
		}
		c.Vectors = append(c.Vectors, v)
	}
	return c
}

// testCalibrationRoundTrip: what is put comes back bit for bit; another
// model, dimension, provider or probe version is not_found (with the
// stored one as the control).
func testCalibrationRoundTrip(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ctx := t.Context()
	c := calibration("text-embedding-3-small", 3, 5, float32(math.Pi))
	got, err := s.PutCalibration(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Fatalf("PutCalibration returned %+v, want %+v", got, c)
	}
	read, err := s.Calibration(ctx, "openai", "text-embedding-3-small", 3, "probes-v1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(read, c) {
		t.Fatalf("Calibration returned %+v, want %+v", read, c)
	}
	for _, k := range []struct {
		provider, model string
		dim             int
		version         string
	}{
		{"ollama", "text-embedding-3-small", 3, "probes-v1"},
		{"openai", "text-embedding-3-large", 3, "probes-v1"},
		{"openai", "text-embedding-3-small", 4, "probes-v1"},
		{"openai", "text-embedding-3-small", 3, "probes-v2"},
	} {
		if _, err := s.Calibration(ctx, k.provider, k.model, k.dim, k.version); memgate.ErrorCode(err) != memgate.ENOTFOUND {
			t.Errorf("Calibration(%v): %v, want not_found", k, err)
		}
	}
}

// testCalibrationFirstWins: a second put of the same key stores nothing
// and returns the first; another key is stored beside it.
func testCalibrationFirstWins(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ctx := t.Context()
	first := calibration("m", 2, 3, 1)
	if _, err := s.PutCalibration(ctx, first); err != nil {
		t.Fatal(err)
	}
	second := calibration("m", 2, 4, 9)
	second.CreatedAt = t1.Add(time.Hour)
	got, err := s.PutCalibration(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, first) {
		t.Fatalf("the second put returned %+v, want the first %+v", got, first)
	}
	other := calibration("m", 3, 3, 2)
	if got, err := s.PutCalibration(ctx, other); err != nil || !reflect.DeepEqual(got, other) {
		t.Fatalf("another dimension: %+v, %v; want it stored", got, err)
	}
	if read, err := s.Calibration(ctx, "openai", "m", 2, "probes-v1"); err != nil || !reflect.DeepEqual(read, first) {
		t.Fatalf("after both puts: %+v, %v; want the first", read, err)
	}
}

// testCalibrationConcurrent: of concurrent puts of one key, every caller
// gets the same stored calibration.
func testCalibrationConcurrent(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	const n = 8
	got := make([]*store.Calibration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got[i], errs[i] = s.PutCalibration(t.Context(), calibration("race", 2, 2, float32(i)))
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("put %d: %v", i, errs[i])
		}
		if !reflect.DeepEqual(got[i], got[0]) {
			t.Fatalf("put %d returned %+v, put 0 %+v: not the same stored calibration", i, got[i], got[0])
		}
	}
}

// testCalibrationInvalid: malformed calibrations are invalid_argument and
// store nothing (a valid one, stored after, is the control).
func testCalibrationInvalid(t *testing.T, newStore func(*testing.T) store.Store) {
	s := newStore(t)
	ctx := t.Context()
	for name, mutate := range map[string]func(c *store.Calibration){
		"no provider":   func(c *store.Calibration) { c.Provider = "" },
		"no model":      func(c *store.Calibration) { c.Model = "" },
		"no version":    func(c *store.Calibration) { c.ProbeVersion = "" },
		"zero dim":      func(c *store.Calibration) { c.Dim = 0 },
		"no vectors":    func(c *store.Calibration) { c.Vectors = nil },
		"wrong length":  func(c *store.Calibration) { c.Vectors[1] = c.Vectors[1][:1] },
		"NaN":           func(c *store.Calibration) { c.Vectors[0][0] = float32(math.NaN()) },
		"infinite":      func(c *store.Calibration) { c.Vectors[0][1] = float32(math.Inf(1)) },
		"no created_at": func(c *store.Calibration) { c.CreatedAt = time.Time{} },
	} {
		c := calibration("bad", 2, 3, 1)
		mutate(c)
		if _, err := s.PutCalibration(ctx, c); memgate.ErrorCode(err) != memgate.EINVALID {
			t.Errorf("%s: %v, want invalid_argument", name, err)
		}
	}
	if _, err := s.Calibration(ctx, "openai", "bad", 2, "probes-v1"); memgate.ErrorCode(err) != memgate.ENOTFOUND {
		t.Fatalf("after refused puts: %v, want not_found", err)
	}
	if _, err := s.PutCalibration(ctx, calibration("bad", 2, 3, 1)); err != nil {
		t.Fatalf("the valid control: %v", err)
	}
}
