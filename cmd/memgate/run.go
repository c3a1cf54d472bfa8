package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/engine"
)

// env is what a command runs with.
type env struct {
	ctx    context.Context // carries the actor "cli" for the audit log
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// usageError is a command-line mistake: exit status 2.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// commands are memgate's commands by name, each in a file of its own.
var commands map[string]func(env, []string) error

func init() {
	commands = map[string]func(env, []string) error{
		"remember":  cmdRemember,
		"recall":    cmdRecall,
		"get":       cmdGet,
		"list":      cmdList,
		"update":    cmdUpdate,
		"supersede": cmdSupersede,
		"revoke":    cmdRevoke,
		"delete":    cmdDelete,
		"forget":    cmdForget,
		"counts":    cmdCounts,
		"import":    cmdImport,
		"export":    cmdExport,
		"bench":     cmdBench,
		"approve":   cmdApprove,
		"reject":    cmdReject,
		"feedback":  cmdFeedback,
		"audit":     cmdAudit,
		"sweep":     cmdSweep,
		"keys":      cmdKeys,
		"serve":     cmdServe,
		"mcp":       cmdMCP,
		"chat":      cmdChat,
		"reembed":   cmdReembed,
		"migrate":   cmdMigrate,
		"backup":    cmdBackup,
		"version":   cmdVersion,
	}
}

// run runs one command and returns the process exit status: 0 success,
// 1 an error (printed on one line naming the field), 2 a usage mistake.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		fmt.Fprint(stderr, usage)
		return 2
	case args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help":
		fmt.Fprint(stdout, usage)
		return 0
	case args[0] == "--version" || args[0] == "-version":
		args = append([]string{"version"}, args[1:]...)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "memgate: unknown command %q (memgate help lists the commands)\n", args[0])
		return 2
	}
	e := env{ctx: engine.WithActor(ctx, "cli"), stdin: stdin, stdout: stdout, stderr: stderr}
	err := cmd(e, args[1:])
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "memgate %s: %s\n", args[0], ue.msg)
		return 2
	}
	fmt.Fprintf(stderr, "memgate %s: %s\n", args[0], errorLine(err))
	return 1
}

// errorLine is the one-line message for err: an application error's message
// (with its field), or the wrapped chain for anything else, which on the CLI
// is the operator's own environment (a path, a permission).
func errorLine(err error) string {
	var me *memgate.Error
	if errors.As(err, &me) {
		if me.Code == memgate.EUNAVAILABLE {
			// A server that cannot be reached: the whole chain says
			// which request and why (refused, timed out).
			return me.Code + ": " + strings.ReplaceAll(err.Error(), "\n", " ")
		}
		return me.Code + ": " + me.Error()
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

// command is one command's parts, which runCommand runs in this order:
// parse the arguments with fs; check the positional ones and build the
// call's input from the flags; open what the command acts on (H: a
// backend, a key administration, an engine); call; print the result T, as
// JSON when *json is set, else with text. A part left nil is skipped.
// Everything that can be refused is refused in check, before open: a
// mistake never opens a database, let alone creates one.
type command[H, T any] struct {
	fs    *flag.FlagSet
	json  *bool
	check func(pos []string) error
	open  func() (H, func(), error)
	call  func(H) (T, error)
	text  func(T) error
}

// runCommand runs cmd on args (see command).
func runCommand[H, T any](args []string, e env, cmd command[H, T]) error {
	pos, err := parse(cmd.fs, args)
	if err != nil {
		return err
	}
	if cmd.check != nil {
		if err := cmd.check(pos); err != nil {
			return err
		}
	}
	var h H
	if cmd.open != nil {
		var done func()
		if h, done, err = cmd.open(); err != nil {
			return err
		}
		defer done()
	}
	v, err := cmd.call(h)
	switch {
	case err != nil:
		return err
	case cmd.json != nil && *cmd.json:
		return writeJSON(e.stdout, v)
	case cmd.text != nil:
		return cmd.text(v)
	}
	return nil
}

// runBackend runs a command over the backend c opens (the local engine, or
// a server with --server), with c's flag set and --json.
func runBackend[T any](args []string, e env, c *common, check func([]string) error, call func(backend) (T, error), text func(T) error) error {
	return runCommand(args, e, command[backend, T]{fs: c.fs, json: &c.json, check: check,
		open: func() (backend, func(), error) { return c.open(e.ctx) }, call: call, text: text})
}

// noArgs refuses positional arguments with msg.
func noArgs(msg string) func([]string) error {
	return func(pos []string) error {
		if len(pos) > 0 {
			return usageError{msg}
		}
		return nil
	}
}

// oneID takes the single positional memory ID into id.
func oneID(id *string) func([]string) error {
	return func(pos []string) error {
		if len(pos) != 1 {
			return usageError{"expected exactly one memory ID"}
		}
		*id = pos[0]
		return nil
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeJSONLine writes v as one line of JSON.
func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
