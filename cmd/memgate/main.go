// Command memgate is governed long-term memory for AI agents: a CLI over an
// embedded database today, and the server, MCP endpoint and inspector as
// they land. main only wires the process to run, which tests call directly.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
