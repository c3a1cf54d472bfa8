package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/agent"
	"github.com/memgate/memgate/client"
	"github.com/memgate/memgate/httpapi"
)

// chatTimeout is a remote turn's HTTP time limit: the server's own limit
// on a turn, and a margin for the answer to travel.
const chatTimeout = httpapi.DefaultChatTimeout + 30*time.Second

// cmdChat is an interactive session with the agent middleware: each line
// of standard input is a message; the reply is printed with, under it, the
// memories that were injected (id and score) and what was remembered. It
// ends at end of input or on /quit.
//
// Locally (--db) the process owner acts for --tenant and --principal with
// the model of --llm, and proposed facts (--extract) are stored
// principal-wide. Remotely (--server, with MEMGATE_API_KEY) each line is a
// POST /v1/chat with the server's model; the key decides the scope.
// Without --conversation, the session is a new conversation, whose id is
// printed first.
func cmdChat(e env, args []string) error {
	var llm llmFlags
	var model agent.Model
	c, s := scoped(e, "chat", "--principal P [--agent A] [--conversation C] (--tenant T --llm ollama:MODEL [--extract] | --server URL)")
	llm.register(c.fs)
	conv := ""
	check := func(pos []string) error {
		if len(pos) > 0 {
			return usageError{"chat takes no arguments: it reads messages from standard input, one per line"}
		}
		if conv = s.conversation; conv == "" {
			conv = agent.NewConversationID(time.Now())
		}
		if c.server != "" {
			return c.remoteOnly("a local chat", "model and embedder apply", llm.explicit())
		}
		var err error
		if model, err = llm.model(); err != nil {
			return err
		}
		if model == nil {
			return usageError{"a local chat needs a model: --llm ollama:MODEL or --llm openai:MODEL (or $" + llmEnv + "); or --server URL to chat through a server"}
		}
		return s.chatScope(conv).Validate()
	}
	open := func() (chatTurn, func(), error) {
		if c.server != "" {
			r, err := newRemoteTimeout(c.server, s.tenant, chatTimeout)
			if err != nil {
				return nil, nil, err
			}
			return func(ctx context.Context, msg string) (*agent.Result, error) {
				return r.c.Chat(ctx, client.ChatRequest{Principal: s.principal, Agent: s.agent, Conversation: conv, Message: msg})
			}, func() {}, nil
		}
		eng, done, err := c.openEngine(e.ctx)
		if err != nil {
			return nil, nil, err
		}
		ag, err := agent.New(agent.Config{Engine: eng, Model: model, Extract: llm.extract})
		if err != nil {
			done()
			return nil, nil, err
		}
		return func(ctx context.Context, msg string) (*agent.Result, error) {
			return ag.Respond(ctx, agent.Turn{Scope: s.chatScope(conv), Message: msg})
		}, done, nil
	}
	return runCommand(args, e, command[chatTurn, struct{}]{fs: c.fs, check: check, open: open,
		call: func(turn chatTurn) (struct{}, error) { return struct{}{}, chatLoop(e, turn, conv, c.json) }})
}

// chatTurn answers one message of the session.
type chatTurn func(ctx context.Context, msg string) (*agent.Result, error)

// chatScope is the scope of a local chat in conversation conv.
func (s *scopeFlags) chatScope(conv string) memgate.Scope {
	return memgate.Scope{Tenant: s.tenant, Principal: s.principal, Agent: s.agent, Conversation: conv}
}

// chatLoop reads the messages of standard input and prints each reply,
// as one JSON result a line with asJSON.
func chatLoop(e env, turn chatTurn, conv string, asJSON bool) error {
	info := e.stdout
	if asJSON {
		info = e.stderr // standard output holds one JSON result per line
	}
	interactive := isTerminal(e.stdin)
	fmt.Fprintf(info, "memgate chat: conversation %s (end with /quit or Ctrl-D)\n", conv)
	in := bufio.NewReaderSize(e.stdin, 64<<10)
	turns, failed := 0, 0
	for {
		if interactive {
			fmt.Fprint(e.stdout, "> ")
		}
		line, rerr := in.ReadString('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return fmt.Errorf("read standard input: %w", rerr)
		}
		msg := strings.TrimRight(line, "\r\n")
		switch strings.TrimSpace(msg) {
		case "/quit", "/exit":
			return chatEnd(turns, failed)
		case "":
		default:
			turns++
			res, err := turn(e.ctx, msg)
			if err != nil {
				if fatalChatError(err) || e.ctx.Err() != nil {
					return err // printed once, by run
				}
				failed++
				fmt.Fprintf(e.stderr, "memgate chat: %s\n", errorLine(err))
			} else if asJSON {
				if err := writeJSONLine(e.stdout, res); err != nil {
					return err
				}
			} else {
				printTurn(e.stdout, res)
			}
		}
		if rerr != nil { // end of input
			return chatEnd(turns, failed)
		}
	}
}

// chatEnd is the session's outcome: an error when a turn failed, so a
// script sees exit status 1.
func chatEnd(turns, failed int) error {
	if failed > 0 {
		return fmt.Errorf("%d of %d messages failed", failed, turns)
	}
	return nil
}

// fatalChatError reports an error no later message can avoid: the key,
// the scope or the configuration is wrong.
func fatalChatError(err error) bool {
	switch memgate.ErrorCode(err) {
	case memgate.EUNAUTHORIZED, memgate.EFORBIDDEN:
		return true
	case memgate.EINVALID:
		switch memgate.ErrorField(err) {
		case "tenant", "principal", "agent", "conversation", "llm", "llm_url":
			return true
		}
	case memgate.EUNAVAILABLE:
		// A server without a model says so on every message.
		return strings.Contains(memgate.ErrorMessage(err), "--llm")
	}
	return false
}

// printTurn prints a reply and, under it, the injected memories and what
// was remembered.
func printTurn(w io.Writer, res *agent.Result) {
	fmt.Fprintf(w, "%s\n", res.Reply)
	if n := len(res.Recall.Results); n == 0 {
		fmt.Fprintf(w, "  [no memories injected (recall %s)]\n", res.Recall.RecallID)
	} else {
		fmt.Fprintf(w, "  [%d injected (recall %s)]\n", n, res.Recall.RecallID)
		for _, h := range res.Recall.Results {
			m := h.Memory
			fmt.Fprintf(w, "    %.3f  %s  %s/%s  %s\n", h.Score, m.ID, m.Kind, m.Source, preview(m.Content, 60))
		}
	}
	for _, o := range res.Remembered {
		if o.Error != nil {
			fmt.Fprintf(w, "  [not remembered: %s message: %s: %s]\n", o.Source, o.Error.Code, o.Error.Message)
		}
	}
	if x := res.Extraction; x != nil {
		switch {
		case x.Error != nil:
			fmt.Fprintf(w, "  [extraction failed: %s]\n", x.Error.Code)
		case x.Malformed > 0:
			fmt.Fprintln(w, "  [extraction: the model's answer was malformed; nothing stored]")
		}
		for _, o := range x.Memories {
			switch {
			case o.Status == string(memgate.StatusPending):
				line := fmt.Sprintf("  [proposed %s %s, pending approval: %s", o.Kind, o.ID, preview(o.Content, 60))
				if o.Supersedes != "" {
					line += " (replaces " + o.Supersedes + " on approval)"
				}
				fmt.Fprintln(w, line+"]")
			case o.Deduplicated:
				fmt.Fprintf(w, "  [already known: %s]\n", o.ID)
			case o.ID != "":
				fmt.Fprintf(w, "  [remembered %s %s: %s]\n", o.Kind, o.ID, preview(o.Content, 60))
			case o.Error != nil:
				fmt.Fprintf(w, "  [a proposed %s was refused: %s]\n", o.Kind, o.Error.Code)
			}
		}
	}
}

// isTerminal reports whether r is a terminal (then a prompt is shown).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
