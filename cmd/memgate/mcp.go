package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/guard"
	"github.com/memgate/memgate/internal/buildinfo"
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
	fs := newFlagSet("mcp", e.stderr, "--tenant T --principal P [--agent A] [--conversation C] [--allow-forget] [--db PATH | --server URL]")
	def := os.Getenv("MEMGATE_DB")
	if def == "" {
		def = "memgate.db"
	}
	c.fs = fs
	fs.StringVar(&c.db, "db", def, "path of the embedded database")
	fs.StringVar(&c.policy, "policy", os.Getenv("MEMGATE_POLICY"), "write-gate policy file (JSON; default: the built-in policy)")
	fs.StringVar(&c.server, "server", os.Getenv("MEMGATE_SERVER"), "URL of a memgate server to use instead of --db (key from $MEMGATE_API_KEY)")
	s.register(fs)
	c.emb.register(fs)
	fs.BoolVar(&allowForget, "allow-forget", false, "offer the forget_me tool, which lets the model erase every memory of the principal (off by default)")
	fs.StringVar(&source, "source", string(mcpserver.DefaultSource),
		"whom remembered memories are attributed to; the write gate's policy for that source applies (by default an assistant's facts and preferences are held as pending)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError{"mcp takes no arguments"}
	}
	src, err := memgate.ParseSource(source)
	if err != nil {
		return err
	}
	var (
		caller mcpserver.Caller
		be     mcpserver.Backend
	)
	if c.server == "" {
		scope := s.scope()
		if err := scope.Validate(); err != nil {
			return err
		}
		eng, done, err := c.openEngine(e.ctx)
		if err != nil {
			return err
		}
		defer done()
		g, err := guard.New(guard.Config{Engine: eng, RateLimit: guard.RateLimit{PerSecond: -1}})
		if err != nil {
			return err
		}
		lc, err := mcpserver.NewLocal(g, localActor, scope, src, allowForget)
		if err != nil {
			return err
		}
		caller, be = lc, lc
	} else {
		caller = mcpserver.RemoteCaller{
			Request:     memgate.Scope{Principal: s.principal, Agent: s.agent, Conversation: s.conversation},
			AllowForget: allowForget,
		}
		r, done, err := c.open(e.ctx)
		if err != nil {
			return err
		}
		defer done()
		be = r
	}
	srv, err := mcpserver.New(mcpserver.Config{
		Backend: be,
		Caller:  caller,
		Source:  src,
		Logger:  slog.New(slog.NewJSONHandler(e.stderr, nil)),
		Version: buildinfo.Get().Version,
	})
	if err != nil {
		return err
	}
	err = srv.Run(e.ctx, &mcp.IOTransport{Reader: io.NopCloser(e.stdin), Writer: nopWriteCloser{e.stdout}})
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed), errors.Is(err, context.Canceled):
		// The client closed standard input, or the process was told to stop.
		return nil
	}
	return err
}

// nopWriteCloser leaves standard output open when the transport closes.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
