package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

const calibrationColumns = `provider, model, dim, probe_version, vectors, created_at`

// Calibration implements store.Store.
func (db *DB) Calibration(ctx context.Context, provider, model string, dim int, probeVersion string) (*store.Calibration, error) {
	r, err := db.reader()
	if err != nil {
		return nil, err
	}
	c, err := scanCalibration(r.QueryRow(ctx, `SELECT `+calibrationColumns+` FROM embedder_calibrations
		WHERE provider = $1 AND model = $2 AND dim = $3 AND probe_version = $4`, provider, model, int32(dim), probeVersion))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, memgate.ErrNotFound()
	}
	if err != nil {
		return nil, interpretError(ctx, "read calibration", err)
	}
	return c, nil
}

// PutCalibration implements store.Store: the insert ignores an existing
// row (the primary key decides between concurrent ones), and the read
// after it, in the same transaction, returns the row that stands.
func (db *DB) PutCalibration(ctx context.Context, c *store.Calibration) (*store.Calibration, error) {
	if err := store.CheckCalibration(c); err != nil {
		return nil, err
	}
	var out *store.Calibration
	err := db.write(ctx, "put calibration", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO embedder_calibrations (`+calibrationColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
			c.Provider, c.Model, int32(c.Dim), c.ProbeVersion, store.EncodeVectors(c.Vectors), c.CreatedAt.UTC()); err != nil {
			return err
		}
		var err error
		out, err = scanCalibration(tx.QueryRow(ctx, `SELECT `+calibrationColumns+` FROM embedder_calibrations
			WHERE provider = $1 AND model = $2 AND dim = $3 AND probe_version = $4`, c.Provider, c.Model, int32(c.Dim), c.ProbeVersion))
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func scanCalibration(row pgx.Row) (*store.Calibration, error) {
	var c store.Calibration
	var dim int32
	var vecs []byte
	var created time.Time
	if err := row.Scan(&c.Provider, &c.Model, &dim, &c.ProbeVersion, &vecs, &created); err != nil {
		return nil, err
	}
	c.Dim = int(dim)
	v, err := store.DecodeVectors(vecs, c.Dim)
	if err != nil {
		return nil, err
	}
	c.Vectors, c.CreatedAt = v, created.UTC()
	return &c, nil
}
