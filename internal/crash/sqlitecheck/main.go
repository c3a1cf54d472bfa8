// Command sqlitecheck runs package crash's file check on one SQLite
// database (read-only: PRAGMA integrity_check and foreign_key_check) and
// exits 0 when it is sound, 1 with the findings otherwise. The crash tests
// build it without -race and run it after every kill (Config.FileChecker):
// in a race-instrumented process the check is too slow.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/memgate/memgate/internal/crash"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sqlitecheck DATABASE")
		os.Exit(2)
	}
	if err := crash.CheckSQLite(context.Background(), os.Args[1]); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
}
