package engine

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/memgate/memgate/store"
)

// Pseudonyms. A principal's identifier is a person's name or an account id:
// it must not outlive the person's forget anywhere memgate writes. The
// audit log, kept as the record of what happened, names a forgotten person
// by a pseudonym; the log lines of the engine never name a principal at
// all, only its pseudonym. A pseudonym is a keyed hash (HMAC-SHA-256, the
// database's key, store.Store.PseudonymKey) of the tenant and principal:
// the same on every replica, useless without the key to someone who reads
// the logs or the audit log and guesses names.

// pseudonymHash is the keyed hash of (tenant, principal): 32 hex
// characters.
func (e *Engine) pseudonymHash(ctx context.Context, tenant, principal string) (string, error) {
	key, err := e.pseudonymKey(ctx)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%d:%s/%s", len(tenant), tenant, principal)
	return hex.EncodeToString(m.Sum(nil)[:16]), nil
}

// Pseudonym returns what the audit log keeps of a forgotten principal:
// store.PseudonymPrefix and the keyed hash.
func (e *Engine) Pseudonym(ctx context.Context, tenant, principal string) (string, error) {
	h, err := e.pseudonymHash(ctx, tenant, principal)
	if err != nil {
		return "", err
	}
	return store.PseudonymPrefix + h, nil
}

// pseudonymKey returns the database's key, read (or made) once.
func (e *Engine) pseudonymKey(ctx context.Context) ([]byte, error) {
	e.pkeyMu.Lock()
	defer e.pkeyMu.Unlock()
	if e.pkey != nil {
		return e.pkey, nil
	}
	key, err := e.store.PseudonymKey(ctx)
	if err != nil {
		return nil, fmt.Errorf("pseudonym key: %w", err)
	}
	e.pkey = key
	return key, nil
}

// pseudonymous is the engine's log handler: an attribute "principal" is
// replaced by "p_" and the principal's keyed hash (with the record's
// "tenant"), so no log line names a person. Without the key (a store that
// cannot give it) the attribute is "p_unknown".
type pseudonymous struct {
	inner  slog.Handler
	e      *Engine
	tenant string // a "tenant" of WithAttrs
}

func (h *pseudonymous) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *pseudonymous) Handle(ctx context.Context, r slog.Record) error {
	tenant, named := h.tenant, false
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "tenant":
			tenant = a.Value.String()
		case "principal":
			named = true
		}
		return true
	})
	if !named {
		return h.inner.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "principal" {
			a = slog.String("principal", h.name(ctx, tenant, a.Value.String()))
		}
		out.AddAttrs(a)
		return true
	})
	return h.inner.Handle(ctx, out)
}

// name is the log form of a principal.
func (h *pseudonymous) name(ctx context.Context, tenant, principal string) string {
	if principal == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	p, err := h.e.pseudonymHash(ctx, tenant, principal)
	if err != nil {
		return "p_unknown"
	}
	return "p_" + p
}

func (h *pseudonymous) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		if a.Key == "tenant" {
			c.tenant = a.Value.String()
		}
		out[i] = a
	}
	for i, a := range out {
		if a.Key == "principal" {
			out[i] = slog.String("principal", h.name(context.Background(), c.tenant, a.Value.String()))
		}
	}
	c.inner = h.inner.WithAttrs(out)
	return &c
}

func (h *pseudonymous) WithGroup(name string) slog.Handler {
	c := *h
	c.inner = h.inner.WithGroup(name)
	return &c
}
