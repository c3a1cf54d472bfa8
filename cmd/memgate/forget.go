package main

import (
	"github.com/memgate/memgate"
)

func cmdForget(e env, args []string) error {
	var s scopeFlags
	c := newCommon(e, "forget", "--tenant T --principal P")
	c.fs.StringVar(&s.tenant, "tenant", "", "tenant (required; with --server it is the key's and may be left out)")
	c.fs.StringVar(&s.principal, "principal", "", "the principal whose memories are erased (required)")
	return runBackend(args, e, c, noArgs("forget takes no arguments"),
		func(be backend) (*memgate.ForgetReceipt, error) {
			return be.Forget(e.ctx, memgate.Scope{Tenant: s.tenant, Principal: s.principal})
		},
		func(rc *memgate.ForgetReceipt) error {
			return printLine(e.stdout, "forgot %d memories of %s", rc.Forgotten, s.principal)
		})
}
