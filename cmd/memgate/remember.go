package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memgate/memgate"
)

// remember and supersede store a new memory from the same flags; update
// changes one with them (see memoryFlags.patch).

func cmdRemember(e env, args []string) error {
	var m memoryFlags
	var supersedes string
	c, s := scoped(e, "remember", "--tenant T --principal P [flags] CONTENT|-")
	c.created = e.stderr
	m.register(c.fs, true)
	m.registerKey(c.fs, "stores nothing")
	c.fs.StringVar(&supersedes, "supersedes", "", "ID of the memory this one replaces (atomically marked superseded)")
	var key string
	c.fs.StringVar(&key, "key", "", "your own name for the memory (e.g. pref:coffee): remembering a key the scope's level has supersedes the memory of the same source that has it")
	var req memgate.RememberRequest
	check := func(pos []string) error {
		var err error
		req, err = m.request(e, *s, pos)
		req.Supersedes, req.Memory.Key = supersedes, key
		return err
	}
	return runBackend(args, e, c, check,
		func(be backend) (*memgate.Remembered, error) { return be.Remember(e.ctx, req) },
		func(mem *memgate.Remembered) error {
			fmt.Fprintln(e.stdout, mem.ID)
			switch {
			case mem.Replayed:
				fmt.Fprintln(e.stderr, "replayed: stored by an earlier call with this idempotency key; nothing new was stored")
			case mem.Deduplicated:
				fmt.Fprintf(e.stderr, "deduplicated: already remembered (seen %d times)\n", mem.SeenCount)
			case mem.Status == memgate.StatusPending:
				fmt.Fprintf(e.stderr, "pending approval: %s\n", mem.StatusReason)
			}
			return nil
		})
}

func cmdSupersede(e env, args []string) error {
	var m memoryFlags
	var old string
	c, s := scoped(e, "supersede", "--tenant T --principal P ID NEW-CONTENT|-")
	m.register(c.fs, false)
	c.fs.StringVar(&m.source, "source", "user", "source of the new memory")
	m.registerKey(c.fs, "supersedes nothing")
	var req memgate.RememberRequest
	check := func(pos []string) error {
		if len(pos) < 2 {
			return usageError{"expected the ID to supersede and the new content"}
		}
		old = pos[0]
		var err error
		req, err = m.request(e, scopeFlags{agent: s.agent, conversation: s.conversation}, pos[1:])
		return err
	}
	return runBackend(args, e, c, check,
		func(be backend) (*memgate.Memory, error) {
			// A remember that names the memory it supersedes, in the scope
			// given, as the API has it.
			sc := s.scope()
			req.Memory.Tenant, req.Memory.Principal, req.Memory.Agent, req.Memory.Conversation = sc.Tenant, sc.Principal, sc.Agent, sc.Conversation
			req.Supersedes = old
			r, err := be.Remember(e.ctx, req)
			if err != nil {
				return nil, err
			}
			return r.Memory, nil
		},
		func(next *memgate.Memory) error { return printLine(e.stdout, "%s", next.ID) })
}

// memoryFlags are the fields remember, supersede and update take.
type memoryFlags struct {
	kind, source, reason, sensitivity, ttl, metadata, content string
	expiresAt, validFrom, validUntil                          timeFlag
	idempotencyKey                                            string
}

func (m *memoryFlags) register(fs *flag.FlagSet, defaults bool) {
	kind, source := "", ""
	if defaults {
		kind, source = "fact", "user"
	}
	fs.StringVar(&m.kind, "kind", kind, "kind: message, fact, preference, task, summary")
	if defaults {
		fs.StringVar(&m.source, "source", source, "source: user, assistant, tool, verified_tool, system, import")
	}
	fs.StringVar(&m.reason, "reason", "", "why this is remembered")
	fs.StringVar(&m.sensitivity, "sensitivity", "", "standard (default) or restricted")
	fs.StringVar(&m.ttl, "ttl", "", "time to live, e.g. 30d, 12h")
	fs.StringVar(&m.metadata, "metadata", "", "metadata as a JSON object")
	m.expiresAt.field, m.validFrom.field, m.validUntil.field = "expires_at", "valid_from", "valid_until"
	fs.Var(&m.expiresAt, "expires-at", "expiry time (RFC 3339)")
	fs.Var(&m.validFrom, "valid-from", "when the fact started to hold (RFC 3339)")
	fs.Var(&m.validUntil, "valid-until", "when the fact stopped holding (RFC 3339)")
}

// registerKey registers --idempotency-key; again says what a retry does.
func (m *memoryFlags) registerKey(fs *flag.FlagSet, again string) {
	fs.StringVar(&m.idempotencyKey, "idempotency-key", "", "a key for retrying safely: the same key and memory again "+again+" and prints the first call's id (kept a day)")
}

func (m *memoryFlags) parseMetadata() (map[string]any, error) {
	if m.metadata == "" {
		return nil, nil
	}
	return memgate.DecodeMetadata([]byte(m.metadata))
}

func (m *memoryFlags) parseTTL() (time.Duration, error) {
	if m.ttl == "" {
		return 0, nil
	}
	return memgate.ParseTTL(m.ttl)
}

// request builds a RememberRequest in s from the flags and the content
// the positional arguments pos hold (see contentArg).
func (m *memoryFlags) request(e env, s scopeFlags, pos []string) (memgate.RememberRequest, error) {
	content, err := contentArg(e, pos)
	if err != nil {
		return memgate.RememberRequest{}, err
	}
	md, err := m.parseMetadata()
	if err != nil {
		return memgate.RememberRequest{}, err
	}
	ttl, err := m.parseTTL()
	if err != nil {
		return memgate.RememberRequest{}, err
	}
	return memgate.RememberRequest{
		Memory: memgate.Memory{
			Tenant: s.tenant, Principal: s.principal, Agent: s.agent, Conversation: s.conversation,
			Kind: memgate.Kind(m.kind), Source: memgate.Source(m.source), Sensitivity: memgate.Sensitivity(m.sensitivity),
			Content: content, Reason: m.reason, Metadata: md,
			ExpiresAt: m.expiresAt.t, ValidFrom: m.validFrom.t, ValidUntil: m.validUntil.t,
		},
		TTL:            ttl,
		IdempotencyKey: m.idempotencyKey,
	}, nil
}

// contentArg returns the content from the positional arguments ("-" reads
// standard input).
func contentArg(e env, pos []string) (string, error) {
	if len(pos) == 0 {
		return "", usageError{"missing CONTENT (or - to read standard input)"}
	}
	if len(pos) == 1 && pos[0] == "-" {
		b, err := io.ReadAll(io.LimitReader(e.stdin, 1<<20))
		if err != nil {
			return "", fmt.Errorf("read standard input: %w", err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	return strings.Join(pos, " "), nil
}
