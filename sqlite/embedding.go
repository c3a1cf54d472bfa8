package sqlite

import (
	"context"
	"database/sql"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// SetEmbedding implements store.Store: one UPDATE of the memory's row,
// guarded by tenant, id and content hash, that writes the four embedding
// columns and nothing else (so the row's update triggers see it, and the
// version and updated_at stay).
func (db *DB) SetEmbedding(ctx context.Context, tenant, id, contentSHA256 string, e *memgate.Embedding) (bool, error) {
	if err := store.CheckSetEmbedding(tenant, e); err != nil {
		return false, err
	}
	provider, model, dim, vector := encodeEmbedding(e)
	var n int64
	err := db.write(ctx, "set embedding", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE memories SET
			embedding_provider = ?, embedding_model = ?, embedding_dim = ?, embedding_vector = ?
			WHERE tenant = ? AND id = ? AND content_sha256 = ?`,
			provider, model, dim, vector, tenant, id, contentSHA256)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return false, err
	}
	return n == 1, nil
}
