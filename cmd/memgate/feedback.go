package main

import "github.com/memgate/memgate"

func cmdFeedback(e env, args []string) error {
	var id string
	var value float64
	c, s := scoped(e, "feedback", "--tenant T --principal P ID --value X")
	c.fs.Float64Var(&value, "value", 0, "usefulness in [-1, 1] (required)")
	check := func(pos []string) error {
		if err := oneID(&id)(pos); err != nil {
			return err
		}
		if !c.explicit("value") {
			return usageError{"--value is required"}
		}
		return nil
	}
	return runBackend(args, e, c, check,
		func(be backend) (*memgate.Memory, error) { return be.Feedback(e.ctx, s.scope(), id, value) },
		func(m *memgate.Memory) error {
			return printLine(e.stdout, "%s feedback: %d reports, mean %.2f", m.ID, m.Feedback.Count, m.Feedback.Mean())
		})
}
