package main

import (
	"fmt"
	"os"
)

// cmdExport writes JSONL whatever --json says: it has no other form.
func cmdExport(e env, args []string) error {
	var out string
	c, s := scoped(e, "export", "--tenant T [--principal P] [--out FILE]")
	c.fs.StringVar(&out, "out", "", "write to FILE instead of standard output")
	return runCommand(args, e, command[backend, int]{
		fs:   c.fs,
		open: func() (backend, func(), error) { return c.open(e.ctx) },
		call: func(be backend) (int, error) {
			scope := s.scope()
			scope.AllPrincipals = s.principal == ""
			w := e.stdout
			if out != "" {
				f, err := os.Create(out)
				if err != nil {
					return 0, err
				}
				defer f.Close()
				w = f
			}
			n, err := be.Export(e.ctx, scope, w)
			if err == nil && out != "" {
				fmt.Fprintf(e.stderr, "exported %d memories to %s\n", n, out)
			}
			return n, err
		},
	})
}
