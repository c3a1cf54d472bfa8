package sqlstore

import (
	"context"
	"errors"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store"
)

const selectCalibration = `SELECT provider, model, dim, probe_version, vectors, created_at
	FROM embedder_calibrations WHERE provider = ? AND model = ? AND dim = ? AND probe_version = ?`

// Calibration implements store.Store.
func (s *Store) Calibration(ctx context.Context, provider, model string, dim int, probeVersion string) (*store.Calibration, error) {
	return read(ctx, s, "read calibration", func(q Querier) (*store.Calibration, error) {
		return scanCalibration(q.QueryRow(ctx, selectCalibration, provider, model, dim, probeVersion))
	})
}

// PutCalibration implements store.Store: the insert leaves an existing row
// as it is (the primary key decides between concurrent ones), and the read
// after it, in the same transaction, returns the row that stands.
func (s *Store) PutCalibration(ctx context.Context, c *store.Calibration) (*store.Calibration, error) {
	if err := store.CheckCalibration(c); err != nil {
		return nil, err
	}
	return write(ctx, s, "put calibration", func(q Querier) (*store.Calibration, error) {
		if _, err := q.Exec(ctx, `INSERT INTO embedder_calibrations (provider, model, dim, probe_version, vectors, created_at)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			c.Provider, c.Model, c.Dim, c.ProbeVersion, store.EncodeVectors(c.Vectors), c.CreatedAt.UTC()); err != nil {
			return nil, err
		}
		return scanCalibration(q.QueryRow(ctx, selectCalibration, c.Provider, c.Model, c.Dim, c.ProbeVersion))
	})
}

func scanCalibration(row Row) (*store.Calibration, error) {
	var c store.Calibration
	var vecs []byte
	err := row.Scan(&c.Provider, &c.Model, &c.Dim, &c.ProbeVersion, &vecs, &c.CreatedAt)
	if errors.Is(err, ErrNoRows) {
		return nil, memgate.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	if c.Vectors, err = store.DecodeVectors(vecs, c.Dim); err != nil {
		return nil, err
	}
	return &c, nil
}
