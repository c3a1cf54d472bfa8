package main

import "github.com/memgate/memgate"

func cmdApprove(e env, args []string) error {
	return review(e, args, "approve", "approved", func(be backend, s memgate.Scope, id string, version int64, _ string) (*memgate.Memory, error) {
		return be.Approve(e.ctx, s, id, version)
	})
}

func cmdReject(e env, args []string) error {
	return review(e, args, "reject", "rejected", func(be backend, s memgate.Scope, id string, version int64, reason string) (*memgate.Memory, error) {
		return be.Reject(e.ctx, s, id, version, reason)
	})
}

// review is the shape approve and reject share: both take the version
// that was reviewed (memgate get and memgate list show it), so a memory
// changed since is refused and stays pending. With --json they print the
// memory as it stands after the decision.
func review(e env, args []string, name, done string, decide func(be backend, s memgate.Scope, id string, version int64, reason string) (*memgate.Memory, error)) error {
	var id, reason string
	var version int64
	c, s := scoped(e, name, "--tenant T --principal P --version N ID")
	c.fs.Int64Var(&version, "version", 0, "the version of the memory that was reviewed (required; memgate get and memgate list --status pending show it)")
	if name == "reject" {
		c.fs.StringVar(&reason, "reason", "", "why it is rejected")
	}
	check := func(pos []string) error {
		if err := oneID(&id)(pos); err != nil {
			return err
		}
		if version <= 0 {
			return usageError{"--version is required: the version of the memory that was reviewed (memgate get and memgate list --status pending show it)"}
		}
		return nil
	}
	return runBackend(args, e, c, check,
		func(be backend) (*memgate.Memory, error) {
			m, err := decide(be, s.scope(), id, version, reason)
			if err == nil && c.json {
				return be.Get(e.ctx, s.scope(), id)
			}
			return m, err
		},
		func(m *memgate.Memory) error { return printLine(e.stdout, "%s %s", m.ID, done) })
}
