package sqlite

import (
	"strings"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/store/sqlstore"
)

// memoryColumns and memoryArgs are the portable store's columns and the
// values it binds for a memory, mapped to SQLite's column types, without
// the key (migration 0010) and the import's receipt (0012): for tests that
// write rows of an older schema.
var memoryColumns = strings.TrimSuffix(sqlstore.MemoryColumns, ", key,\n\timported_status, imported_created_by, imported_updated_by")

func memoryArgs(m *memgate.Memory) ([]any, error) {
	args, err := sqlstore.MemoryArgs(m)
	if err != nil {
		return nil, err
	}
	return bind(args[:len(args)-4])
}

var loadMigrations = sqlstore.LoadMigrations

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
