package server_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/embedder/builtin"
	"github.com/memgate/memgate/server"
)

// probing is an embedder whose probe answers err.
type probing struct{ err error }

func (p probing) Embed(_ context.Context, texts []string) ([]memgate.Embedding, error) {
	out := make([]memgate.Embedding, len(texts))
	for i := range out {
		out[i] = memgate.Embedding{Provider: "p", Model: "m", Dim: builtin.Dim, Vector: builtin.Vector(texts[i])}
	}
	return out, nil
}

func (p probing) Probe(ctx context.Context) (memgate.Embedding, error) {
	if p.err != nil {
		return memgate.Embedding{}, p.err
	}
	embs, _ := p.Embed(ctx, []string{"probe"})
	return embs[0], nil
}

// TestRunProbesTheEmbedderFirst: an embedder whose probe fails stops Run
// before the database is opened (nothing is created, no key minted).
func TestRunProbesTheEmbedderFirst(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "m.db")
	bad := &memgate.Error{Code: memgate.EINVALID, Field: "embedder", Message: `ollama (model "x") does not know the model`}
	var stdout, stderr lockedBuffer
	err := server.Run(context.Background(), server.Config{Addr: "127.0.0.1:0", DB: db, Embedder: probing{err: bad}}, &stdout, &stderr)
	if !errors.Is(err, bad) || !strings.Contains(err.Error(), "does not know the model") {
		t.Fatalf("Run: %v", err)
	}
	if _, statErr := os.Stat(db); !os.IsNotExist(statErr) {
		t.Fatalf("the database was created before the probe failed (%v)", statErr)
	}
	if stdout.String() != "" {
		t.Fatalf("stdout %q", stdout.String())
	}
	// Control: a probe that answers lets Run start; it logs the provenance.
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- server.Run(ctx, server.Config{Addr: "127.0.0.1:0", DB: db, Embedder: probing{}, Ready: func(string) { close(ready) }}, &stdout, &stderr)
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Run: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), `"msg":"embedder ready","provider":"p","model":"m","dim":484`) {
		t.Fatalf("log:\n%s", stderr.String())
	}
}
