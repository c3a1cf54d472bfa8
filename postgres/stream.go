package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/memgate/memgate/store/sqlstore"
)

// Stream implements sqlstore.Streamer: a query of the pool, as Read's
// querier runs it, whose rows are scanned from pgx's raw values. A cold
// load's columns are texts (which pgx asks for in the text format, their
// bytes either way), and byteas, integers and timestamps in the binary
// format (their bytes, big-endian integers and microseconds since 2000):
// Scan reads those itself instead of through pgx's scan plans, about a
// microsecond a column of every row of a partition. Any other column
// (another type, or format) goes through pgx as Querier's does.
func (c *conn) Stream(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	if c.closed.Load() {
		return nil, sqlstore.ErrClosed()
	}
	rs, err := c.pool.Query(ctx, c.rebind(query), args...)
	if err != nil {
		return nil, err
	}
	return streamRows{rs}, nil
}

type streamRows struct{ pgx.Rows }

func (r streamRows) Close() { r.Rows.Close() }

// y2k is 2000-01-01 00:00:00 UTC in Unix microseconds, the epoch of
// PostgreSQL's binary timestamps.
const y2k = 946_684_800_000_000

// Scan implements sqlstore.Rows for the destinations of sqlstore.Streamer.
// A column it does not read itself costs what pgx's Rows.Scan costs, and
// more: pgx plans that scan again for every value.
func (r streamRows) Scan(dest ...any) error {
	fds, vals := r.FieldDescriptions(), r.RawValues()
	if len(dest) != len(vals) {
		return fmt.Errorf("postgres: stream: %d destinations for %d columns", len(dest), len(vals))
	}
	for i, d := range dest {
		v, fd := vals[i], fds[i]
		bin := fd.Format == pgx.BinaryFormatCode
		switch d := d.(type) {
		case *sqlstore.Borrowed:
			// A text is its bytes in either format (pgx asks for texts
			// as text); a bytea in the binary format only.
			if fd.DataTypeOID == pgtype.TextOID || fd.DataTypeOID == pgtype.VarcharOID || bin && fd.DataTypeOID == pgtype.ByteaOID {
				*d = sqlstore.Borrowed(v) // nil for NULL
				continue
			}
		case *int64:
			switch {
			case !bin:
			case v == nil:
				return fmt.Errorf("postgres: stream: column %d is NULL", i)
			case fd.DataTypeOID == pgtype.Int8OID && len(v) == 8:
				*d = int64(binary.BigEndian.Uint64(v))
				continue
			case fd.DataTypeOID == pgtype.Int4OID && len(v) == 4:
				*d = int64(int32(binary.BigEndian.Uint32(v)))
				continue
			}
		case *time.Time:
			if bin && fd.DataTypeOID == pgtype.TimestamptzOID {
				if v == nil {
					return fmt.Errorf("postgres: stream: column %d is NULL", i)
				}
				t, err := timestamptz(v)
				if err != nil {
					return err
				}
				*d = t
				continue
			}
		case **time.Time:
			if bin && fd.DataTypeOID == pgtype.TimestamptzOID {
				if v == nil {
					*d = nil
					continue
				}
				t, err := timestamptz(v)
				if err != nil {
					return err
				}
				*d = &t
				continue
			}
		}
		if err := r.slow(fd.DataTypeOID, fd.Format, v, d); err != nil {
			return err
		}
	}
	return nil
}

// slowScans counts the columns Scan left to pgx, for tests.
var slowScans atomic.Int64

// slow scans one column through pgx, DriverBytes for Borrowed.
func (r streamRows) slow(oid uint32, format int16, v []byte, d any) error {
	slowScans.Add(1)
	if b, ok := d.(*sqlstore.Borrowed); ok {
		d = (*pgtype.DriverBytes)(b)
	}
	return r.Conn().TypeMap().Scan(oid, format, v, d)
}

// timestamptz decodes a binary timestamptz as pgx does into a time.Time
// (in UTC, as AfterConnect has pgx read them): ±infinity cannot be one.
func timestamptz(v []byte) (time.Time, error) {
	if len(v) != 8 {
		return time.Time{}, fmt.Errorf("postgres: stream: timestamptz of %d bytes", len(v))
	}
	us := int64(binary.BigEndian.Uint64(v))
	if us == math.MaxInt64 || us == math.MinInt64 {
		return time.Time{}, errors.New("postgres: stream: cannot scan an infinite timestamptz into a time")
	}
	return time.UnixMicro(us + y2k).UTC(), nil
}
