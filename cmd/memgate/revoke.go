package main

import "github.com/memgate/memgate"

func cmdRevoke(e env, args []string) error {
	var id, reason string
	c, s := scoped(e, "revoke", "--tenant T --principal P ID [--reason WHY]")
	c.fs.StringVar(&reason, "reason", "", "why it is revoked")
	return runBackend(args, e, c, oneID(&id),
		func(be backend) (*memgate.Memory, error) { return be.Revoke(e.ctx, s.scope(), id, reason) },
		func(m *memgate.Memory) error { return printLine(e.stdout, "%s revoked", m.ID) })
}
