package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps prepared statements for the queries every write and
// recall repeats: preparing (parsing and planning) a statement costs more
// than running it for the small statements memgate issues, and the driver
// does not cache them itself. Statements are prepared once on the pool they
// belong to (database/sql re-prepares them on each connection as needed)
// and closed with the database.
type stmtCache struct {
	mu    sync.Mutex
	stmts map[stmtKey]*sql.Stmt
}

type stmtKey struct {
	pool  *sql.DB
	query string
}

func (c *stmtCache) get(ctx context.Context, pool *sql.DB, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := stmtKey{pool, query}
	if s, ok := c.stmts[k]; ok {
		return s, nil
	}
	s, err := pool.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if c.stmts == nil {
		c.stmts = map[stmtKey]*sql.Stmt{}
	}
	c.stmts[k] = s
	return s, nil
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.stmts {
		s.Close()
	}
	c.stmts = nil
}

// writerQueries are prepared on the writer when the database opens. They
// cannot be prepared lazily: the writer pool has one connection, which an
// open transaction holds, so preparing on the pool from inside a
// transaction would wait for itself.
var writerQueries = []string{insertMemory, dedupSQL, foldSQL, readByID, populationCountSQL}

// readByID reads one memory by (tenant, id), unscoped: for read-backs
// inside a write whose scope was already checked.
const readByID = "SELECT " + memoryColumns + " FROM memories WHERE tenant = ? AND id = ?"

func (db *DB) prepareWriter(ctx context.Context) error {
	for _, q := range writerQueries {
		if _, err := db.stmts.get(ctx, db.w, q); err != nil {
			return err
		}
	}
	return nil
}

// txStmt returns the writer statement for query bound to tx (closed with
// the transaction): the one prepared at open, or, for a query that is not
// in writerQueries, one prepared in tx.
func (db *DB) txStmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	db.stmts.mu.Lock()
	s, ok := db.stmts.stmts[stmtKey{db.w, query}]
	db.stmts.mu.Unlock()
	if !ok {
		return tx.PrepareContext(ctx, query)
	}
	return tx.StmtContext(ctx, s), nil
}

// readStmt returns the cached reader statement for query.
func (db *DB) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	r, err := db.reader()
	if err != nil {
		return nil, err
	}
	return db.stmts.get(ctx, r, query)
}
