// Command crash is the record run of memgate's crash-durability harness
// (package internal/crash, issue 11): it builds memgate, serves a new
// database with it, SIGKILLs the server -kills times at random moments
// while writers remember and supersede their own memories, restarts it,
// re-sends what was in flight with the same Idempotency-Key, and checks
// that every acknowledged memory is stored exactly once with its content
// hash, that every acknowledged supersession is in place and none is half
// done or has two successors, and (SQLite) that the file passes
// PRAGMA integrity_check after every kill.
//
//	go run ./crash -kills 1000                 # SQLite, in a temporary directory
//	go run ./crash -kills 200 -postgres URL    # PostgreSQL: a new schema, dropped after
//	go run ./crash -kills 200 -postgres URL -replicas 2
//
// It exits 1 when a guarantee broke (the report says which, with ids and
// request numbers, never content), 2 when the harness could not run.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	mrand "math/rand/v2"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/memgate/memgate/bench/internal/memgatebin"
	"github.com/memgate/memgate/internal/crash"
)

func main() {
	var (
		cfg      crash.Config
		pgURL    string
		bin      string
		asJSON   bool
		keep     bool
		seed     uint64
		minDelay time.Duration
		maxDelay time.Duration
	)
	flag.IntVar(&cfg.Kills, "kills", 1000, "number of SIGKILLs")
	flag.IntVar(&cfg.Writers, "writers", crash.DefaultWriters, "concurrent writers")
	flag.IntVar(&cfg.MaxBatch, "max-batch", crash.DefaultMaxBatch, "largest batch remember (one request in three is a batch)")
	flag.StringVar(&pgURL, "postgres", "", "PostgreSQL URL: run against a new schema of this database instead of SQLite")
	flag.IntVar(&cfg.Replicas, "replicas", 1, "serve processes over PostgreSQL (1 or 2; with 2 each kill takes one while the other serves)")
	flag.Uint64Var(&seed, "seed", 0, "seed of the random choices (0: random; the seed used is printed)")
	flag.DurationVar(&minDelay, "min-delay", crash.DefaultMinDelay, "shortest time from writers starting to a kill")
	flag.DurationVar(&maxDelay, "max-delay", crash.DefaultMaxDelay, "longest time from writers starting to a kill")
	flag.StringVar(&bin, "bin", "", "memgate binary (default: build ./cmd/memgate of the main module)")
	flag.StringVar(&cfg.Dir, "dir", "", "directory for the database, policy and server logs (default: a temporary one, removed unless a check failed)")
	flag.BoolVar(&keep, "keep", false, "keep the PostgreSQL schema")
	flag.BoolVar(&cfg.NoIdempotencyKey, "no-key", false, "control: send no Idempotency-Key (retries of remembers stored before a kill are stored again, of supersessions refused as conflicts)")
	flag.BoolVar(&asJSON, "json", false, "print the report as JSON")
	verbose := flag.Bool("v", false, "print the time of each step of every kill")
	flag.Parse()
	if seed == 0 {
		seed = mrand.Uint64()
	}
	cfg.Seed, cfg.MinDelay, cfg.MaxDelay = seed, minDelay, maxDelay
	cfg.Progress = os.Stderr
	if *verbose {
		cfg.Trace = os.Stderr
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, cfg, pgURL, bin, keep)
	if rep != nil {
		if asJSON {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			enc.Encode(rep)
		} else {
			printReport(rep)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash:", err)
		os.Exit(2)
	}
	if rep.Err() != nil {
		fmt.Fprintln(os.Stderr, "crash: FAILED: a guarantee broke (see the problems above)")
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg crash.Config, pgURL, bin string, keep bool) (rep *crash.Report, err error) {
	if cfg.Dir == "" {
		// The binary, the database and the servers' logs: removed after a
		// clean run, kept for a look after a failed one.
		d, err := os.MkdirTemp("", "memgate-crash-")
		if err != nil {
			return nil, err
		}
		cfg.Dir = d
		defer func() {
			if err == nil && rep.Err() == nil {
				os.RemoveAll(d)
			} else {
				fmt.Fprintln(os.Stderr, "crash: kept", d)
			}
		}()
	}
	if bin == "" {
		if bin, err = memgatebin.Build(ctx, cfg.Dir); err != nil {
			return nil, err
		}
	}
	cfg.Binary = bin
	if pgURL == "" {
		cfg.SQLite = filepath.Join(cfg.Dir, "crash.db")
	} else {
		u, schema, err := createSchema(ctx, pgURL)
		if err != nil {
			return nil, err
		}
		cfg.Postgres = u
		if keep {
			defer fmt.Fprintf(os.Stderr, "crash: kept the schema %s\n", schema)
		} else {
			defer dropSchema(context.WithoutCancel(ctx), pgURL, schema)
		}
	}
	fmt.Fprintf(os.Stderr, "crash: %d kills over %s, %d writers, seed %d\n", cfg.Kills, backend(cfg), max(cfg.Writers, 1), cfg.Seed)
	return crash.Run(ctx, cfg)
}

func backend(cfg crash.Config) string {
	if cfg.Postgres != "" {
		return fmt.Sprintf("PostgreSQL (%d replica(s))", max(cfg.Replicas, 1))
	}
	return "SQLite"
}

func randomHex() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// createSchema creates a new schema in the database at base and returns
// base with its search_path set to it.
func createSchema(ctx context.Context, base string) (string, string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", "", fmt.Errorf("the PostgreSQL URL does not parse")
	}
	schema := "memgate_crash_" + randomHex()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", "", fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		return "", "", fmt.Errorf("create schema: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), schema, nil
}

func dropSchema(ctx context.Context, base, schema string) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err == nil {
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "crash: drop schema %s: %v\n", schema, err)
	}
}

func printReport(r *crash.Report) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	row := func(k string, v any) { fmt.Fprintf(tw, "%s\t%v\n", k, v) }
	row("backend", fmt.Sprintf("%s, %d replica(s)", r.Backend, r.Replicas))
	row("seed", r.Seed)
	row("kills", r.Kills)
	row("writers", r.Writers)
	row("requests acknowledged", r.Requests)
	row("supersessions acknowledged", r.Supersessions)
	row("memories acknowledged", r.Acknowledged)
	row("memories stored at the end", r.StoredAtEnd)
	row("in flight at kill", r.InFlightAtKill)
	row("requests retried / re-sends", fmt.Sprintf("%d / %d", r.Retried, r.Resends))
	row("retries answered as replays", fmt.Sprintf("%d (%d supersessions)", r.Replayed, r.SupersessionsReplayed))
	row("5xx answers", r.ServerErrors)
	row("lost (goal 0)", r.Lost)
	row("corrupt (goal 0)", r.Corrupt)
	row("duplicates (goal 0)", r.Duplicates)
	row("strays (goal 0)", r.Strays)
	row("half-done supersessions (goal 0)", r.HalfDone)
	row("double successors (goal 0)", r.DoubleSuccessors)
	row("wrong status or link (goal 0)", r.WrongState)
	row("refused (goal 0)", r.Refused)
	row("supersession retries answered 409 (goal 0)", r.Conflicts)
	row("count mismatches (goal 0)", r.CountMismatches)
	if r.Integrity == "n/a" {
		row("integrity_check", "n/a (PostgreSQL)")
	} else {
		row("integrity_check", fmt.Sprintf("%s (%d checks, %d failed, p50 %.1f ms)", r.Integrity, r.IntegrityChecks, r.IntegrityFailures, r.CheckP50ms))
	}
	row("kill→ready p50 / p99 / max", fmt.Sprintf("%.1f / %.1f / %.1f ms", r.RestartP50ms, r.RestartP99ms, r.RestartMaxms))
	row("wall time", fmt.Sprintf("%.1f s", r.WallSecs))
	tw.Flush()
	for _, p := range r.Problems {
		fmt.Println("problem:", p)
	}
	if r.Dir != "" {
		fmt.Println("logs:", r.Dir)
	}
}
