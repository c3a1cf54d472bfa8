package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

// Calibration implements store.Store.
func (db *DB) Calibration(ctx context.Context, provider, model string, dim int, probeVersion string) (*store.Calibration, error) {
	r, err := db.reader()
	if err != nil {
		return nil, err
	}
	c, err := scanCalibration(r.QueryRowContext(ctx, `SELECT provider, model, dim, probe_version, vectors, created_at
		FROM embedder_calibrations WHERE provider = ? AND model = ? AND dim = ? AND probe_version = ?`, provider, model, dim, probeVersion))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memgate.ErrNotFound()
	}
	return c, interpretError(ctx, "read calibration", err)
}

// PutCalibration implements store.Store: the insert ignores an existing
// row, and the read after it, in the same write transaction, returns the
// row that stands.
func (db *DB) PutCalibration(ctx context.Context, c *store.Calibration) (*store.Calibration, error) {
	if err := store.CheckCalibration(c); err != nil {
		return nil, err
	}
	var out *store.Calibration
	err := db.write(ctx, "put calibration", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO embedder_calibrations (provider, model, dim, probe_version, vectors, created_at)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			c.Provider, c.Model, c.Dim, c.ProbeVersion, store.EncodeVectors(c.Vectors), micros(c.CreatedAt)); err != nil {
			return err
		}
		var err error
		out, err = scanCalibration(tx.QueryRowContext(ctx, `SELECT provider, model, dim, probe_version, vectors, created_at
			FROM embedder_calibrations WHERE provider = ? AND model = ? AND dim = ? AND probe_version = ?`, c.Provider, c.Model, c.Dim, c.ProbeVersion))
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func scanCalibration(row *sql.Row) (*store.Calibration, error) {
	var c store.Calibration
	var vecs []byte
	var created int64
	if err := row.Scan(&c.Provider, &c.Model, &c.Dim, &c.ProbeVersion, &vecs, &created); err != nil {
		return nil, err
	}
	v, err := store.DecodeVectors(vecs, c.Dim)
	if err != nil {
		return nil, err
	}
	c.Vectors, c.CreatedAt = v, fromMicros(created)
	return &c, nil
}
