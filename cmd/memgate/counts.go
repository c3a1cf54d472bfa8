package main

import (
	"fmt"

	"github.com/memgate/memgate"
)

// countsResponse is the JSON shape of counts.
type countsResponse struct {
	Counts []memgate.Count `json:"counts"`
}

func cmdCounts(e env, args []string) error {
	c, s := scoped(e, "counts", "--tenant T [--principal P]")
	return runBackend(args, e, c, nil,
		func(be backend) (countsResponse, error) {
			scope := s.scope()
			scope.AllPrincipals = s.principal == ""
			counts, err := be.Counts(e.ctx, scope)
			if counts == nil {
				counts = []memgate.Count{}
			}
			return countsResponse{counts}, err
		},
		func(r countsResponse) error {
			return table(e.stdout, "PRINCIPAL\tKIND\tSTATUS\tCOUNT", len(r.Counts), func(i int) string {
				n := r.Counts[i]
				return fmt.Sprintf("%s\t%s\t%s\t%d", n.Principal, n.Kind, n.Status, n.N)
			})
		})
}
