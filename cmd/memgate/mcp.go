package main

import (
	"context"
	"errors"
	"io"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/internal/buildinfo"
	"github.com/memgate/memgate/internal/logfmt"
	"github.com/memgate/memgate/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// localActor is the id of the key a local memgate mcp acts with, and its
// actor in the audit log.
const localActor = "mcp"

// cmdMCP serves the memory tools over MCP on standard input and output.
// Standard output is the protocol channel: nothing else is ever written to
// it; logs go to standard error.
//
// Locally (--db), the flags fix the identity: the tools act through the
// guard with an agent key made from them (never stored): bound to --tenant
// and --principal, and to --agent when given, with --source as the one
// source it may claim; --conversation narrows every call. So a model
// reaches that principal's memories and no one else's, never a restricted
// one, and writes what an agent key may. forget_me is offered only with
// --allow-forget, and then acts as the person's own (user) key would. Remotely (--server, with MEMGATE_API_KEY), the server's
// key decides, exactly as for its REST API; --principal, --agent and
// --conversation are sent as the narrowing fields.
//
// A missing --db file is refused, not created: an MCP client starts this
// command from its own configuration, in a working directory of its own,
// and keeps its standard error in a log few people read, so a mistyped
// path would otherwise give the model an empty memory, and keep what it
// remembers where nobody looks.
func cmdMCP(e env, args []string) error {
	var c common
	var s scopeFlags
	var allowForget bool
	var source string
	var src memgate.Source
	fs := newFlagSet("mcp", e.stderr, "--tenant T --principal P [--agent A] [--conversation C] [--allow-forget] [--db PATH | --server URL]")
	c.registerLocal(fs)
	s.register(fs)
	c.emb.register(fs)
	fs.BoolVar(&allowForget, "allow-forget", false, "offer the forget_me tool, which lets the model erase every memory of the principal (off by default)")
	fs.StringVar(&source, "source", string(mcpserver.DefaultSource),
		"whom remembered memories are attributed to; the write gate's policy for that source applies (by default an assistant's facts and preferences are held as pending)")
	check := func(pos []string) error {
		if len(pos) > 0 {
			return usageError{"mcp takes no arguments"}
		}
		var err error
		if src, err = memgate.ParseSource(source); err != nil || c.server != "" {
			return err
		}
		return s.scope().Validate()
	}
	open := func() (mcpserver.Config, func(), error) {
		if c.server != "" {
			be, done, err := c.open(e.ctx)
			return mcpserver.Config{Backend: be, Caller: mcpserver.RemoteCaller{
				Request:     memgate.Scope{Principal: s.principal, Agent: s.agent, Conversation: s.conversation},
				AllowForget: allowForget,
			}}, done, err
		}
		g, done, err := openGuard(func() (*engine.Engine, func(), error) { return c.openEngine(e.ctx) })
		if err != nil {
			return mcpserver.Config{}, nil, err
		}
		lc, err := mcpserver.NewLocal(g, localActor, s.scope(), src, allowForget)
		if err != nil {
			done()
			return mcpserver.Config{}, nil, err
		}
		return mcpserver.Config{Backend: lc, Caller: lc}, done, nil
	}
	return runCommand(args, e, command[mcpserver.Config, struct{}]{fs: fs, check: check, open: open,
		call: func(cfg mcpserver.Config) (struct{}, error) { return struct{}{}, serveMCP(e, cfg, src) }})
}

// serveMCP runs the MCP server of cfg on standard input and output until
// the client closes standard input or the process is told to stop.
func serveMCP(e env, cfg mcpserver.Config, src memgate.Source) error {
	cfg.Source = src
	cfg.Logger = logfmt.New(e.stderr, nil)
	cfg.Version = buildinfo.Get().Version
	srv, err := mcpserver.New(cfg)
	if err != nil {
		return err
	}
	err = srv.Run(e.ctx, &mcp.IOTransport{Reader: io.NopCloser(e.stdin), Writer: nopWriteCloser{e.stdout}})
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed), errors.Is(err, context.Canceled):
		return nil
	}
	return err
}

// nopWriteCloser leaves standard output open when the transport closes.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
