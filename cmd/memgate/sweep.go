package main

import "time"

func cmdSweep(e env, args []string) error {
	var grace time.Duration
	c := newCommon(e, "sweep", "[--grace 24h]")
	c.fs.DurationVar(&grace, "grace", 24*time.Hour, "delete memories that expired more than this long ago")
	check := func([]string) error {
		if c.server != "" {
			return usageError{"sweep runs on the server's own schedule (memgate serve --sweep-every); it has no --server form"}
		}
		return nil
	}
	return runBackend(args, e, c, check,
		func(be backend) (deleted[int], error) {
			n, err := be.Sweep(e.ctx, grace)
			return deleted[int]{n}, err
		},
		func(d deleted[int]) error { return printLine(e.stdout, "deleted %d expired memories", d.Deleted) })
}
