package postgres

import (
	"testing"

	"github.com/memgate/memgate/engine/enginetest"
	"github.com/memgate/memgate/store"
)

// Two engines over one PostgreSQL schema, as two "memgate serve" replicas
// behind a load balancer run: what one writes, the other recalls at once,
// and what one revokes, forgets or supersedes, the other never returns.
func TestReplicas(t *testing.T) {
	enginetest.RunReplicas(t, func(t *testing.T) (store.Store, store.Store) {
		schema := freshSchema(t)
		return openTest(t, schema), openTest(t, schema)
	})
}
