package main

import (
	"fmt"
	"io"
	"os"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
)

func cmdImport(e env, args []string) error {
	var tenant string
	var batch int
	var trust bool
	c := newCommon(e, "import", "--tenant T [--trust-status] FILE.jsonl|-")
	c.created = e.stderr
	c.fs.StringVar(&tenant, "tenant", "", "tenant that owns the imported memories (required; with --server the key's)")
	c.fs.IntVar(&batch, "batch", engine.DefaultMaxBatch, "memories per atomic batch")
	c.fs.BoolVar(&trust, "trust-status", false, "keep each line's status as the file gives it, over the write gate's (restoring your own export; audited)")
	var r io.Reader = e.stdin
	var file *os.File
	defer func() {
		if file != nil {
			file.Close()
		}
	}()
	check := func(pos []string) error {
		if len(pos) != 1 {
			return usageError{"expected one FILE.jsonl (or - for standard input)"}
		}
		if c.server != "" && c.explicit("batch") {
			return usageError{"--batch applies to the local database; the server batches an import itself"}
		}
		if pos[0] == "-" {
			return nil
		}
		var err error
		if file, err = os.Open(pos[0]); err != nil {
			return err
		}
		r = file
		return nil
	}
	return runBackend(args, e, c, check,
		func(be backend) (memgate.ImportResult, error) {
			res, err := be.Import(e.ctx, memgate.ImportRequest{Tenant: tenant, BatchSize: batch, TrustStatus: trust}, r)
			if err != nil && res.Imported > 0 {
				fmt.Fprintf(e.stderr, "memgate import: %d memories were stored before the error\n", res.Imported)
			}
			return res, err
		},
		func(res memgate.ImportResult) error {
			if err := printLine(e.stdout, "imported %d memories from %d lines in %d batches", res.Imported, res.Lines, res.Batches); err != nil {
				return err
			}
			if res.Deduplicated+res.Pending+res.Evicted+res.TrustedStatus == 0 {
				return nil
			}
			return printLine(e.stdout, "%d folded into memories already there, %d pending approval, %d evicted by retention, %d kept their file's status (--trust-status)",
				res.Deduplicated, res.Pending, res.Evicted, res.TrustedStatus)
		})
}
