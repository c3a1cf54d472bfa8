package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// SetEmbedding implements store.Store: one conditional UPDATE of the
// embedding's four columns. The content hash in its WHERE clause is
// re-checked under the row lock, so a concurrent content update wins. The
// change triggers (migration 0005) see it as the memory's change.
func (db *DB) SetEmbedding(ctx context.Context, tenant, id, contentSHA256 string, e *memgate.Embedding) (bool, error) {
	if err := store.CheckSetEmbedding(tenant, e); err != nil {
		return false, err
	}
	provider, model, dim, vector := encodeEmbedding(e)
	var wrote bool
	err := db.write(ctx, "set embedding", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE memories SET embedding_provider = $1, embedding_model = $2,
			embedding_dim = $3, embedding_vector = $4 WHERE tenant = $5 AND id = $6 AND content_sha256 = $7`,
			provider, model, dim, vector, tenant, id, contentSHA256)
		wrote = tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return false, err
	}
	return wrote, nil
}
