package main

// deleted is the JSON shape of what delete and sweep deleted: the id, or
// the number of memories.
type deleted[T any] struct {
	Deleted T `json:"deleted"`
}

func cmdDelete(e env, args []string) error {
	var id string
	c, s := scoped(e, "delete", "--tenant T --principal P ID")
	return runBackend(args, e, c, oneID(&id),
		func(be backend) (deleted[string], error) { return deleted[string]{id}, be.Delete(e.ctx, s.scope(), id) },
		func(d deleted[string]) error { return printLine(e.stdout, "%s deleted", d.Deleted) })
}
