package main

import (
	"flag"

	"github.com/memgate/memgate"
)

func cmdUpdate(e env, args []string) error {
	var m memoryFlags
	var version int64
	var clearExpiry bool
	c, s := scoped(e, "update", "--tenant T --principal P ID [--version N] [--content TEXT] [flags]")
	m.register(c.fs, false)
	c.fs.StringVar(&m.content, "content", "", "new content")
	c.fs.Int64Var(&version, "version", 0, "the version this update is based on (compare-and-set); default: the current one")
	c.fs.BoolVar(&clearExpiry, "clear-expiry", false, "remove the expiry")
	var id string
	var p memgate.Patch
	set := map[string]bool{}
	check := func(pos []string) error {
		if err := oneID(&id)(pos); err != nil {
			return err
		}
		c.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		var err error
		p, err = m.patch(set)
		p.ClearExpiresAt = clearExpiry
		return err
	}
	return runBackend(args, e, c, check,
		func(be backend) (*memgate.Memory, error) {
			if !set["version"] {
				cur, err := be.Get(e.ctx, s.scope(), id)
				if err != nil {
					return nil, err
				}
				version = cur.Version
			}
			return be.Update(e.ctx, s.scope(), id, version, p)
		},
		func(out *memgate.Memory) error { return printLine(e.stdout, "%s version %d", out.ID, out.Version) })
}

// patch is the change the flags given (set) ask for.
func (m *memoryFlags) patch(set map[string]bool) (memgate.Patch, error) {
	var p memgate.Patch
	if set["content"] {
		p.Content = &m.content
	}
	if set["reason"] {
		p.Reason = &m.reason
	}
	if set["kind"] {
		k := memgate.Kind(m.kind)
		p.Kind = &k
	}
	if set["sensitivity"] {
		sv := memgate.Sensitivity(m.sensitivity)
		p.Sensitivity = &sv
	}
	if set["metadata"] {
		md, err := m.parseMetadata()
		if err != nil {
			return p, err
		}
		p.Metadata, p.ReplaceMetadata = md, true
	}
	var err error
	p.TTL, err = m.parseTTL()
	p.ExpiresAt, p.ValidFrom, p.ValidUntil = m.expiresAt.t, m.validFrom.t, m.validUntil.t
	return p, err
}
