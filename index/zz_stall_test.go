package index

import (
	"os"
	"testing"
	"time"
)

func TestZZStall(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	c := corpus(100000)
	p := NewPartition(Config{})
	var worst time.Duration
	worstAt := 0
	start := time.Now()
	for i, e := range c.entries {
		s := time.Now()
		if err := p.Upsert(e); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(s); d > worst {
			worst, worstAt = d, i+1
		}
	}
	t.Logf("100k upserts %v, worst upsert %v at %d", time.Since(start), worst, worstAt)
	p.Settle()
	t.Logf("settled after %v; ivf %v", time.Since(start), p.ivf != nil)
}
