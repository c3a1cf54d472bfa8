package main

import (
	"os"
	"time"

	"github.com/memgate/memgate/guard"
	"github.com/memgate/memgate/httpapi"
	"github.com/memgate/memgate/server"
)

func cmdServe(e env, args []string) error {
	var cfg server.Config
	var rate, anonRate float64
	var burst, anonBurst int
	var proxies string
	var emb embedderFlags
	var llm llmFlags
	fs := newFlagSet("serve", e.stderr, "[--addr 127.0.0.1:7070] [--db memgate.db | --postgres URL] [--policy FILE] [flags]")
	fs.StringVar(&cfg.Addr, "addr", server.DefaultAddr, "address to listen on (port 0 picks a free port)")
	fs.StringVar(&cfg.DB, "db", envDefault("MEMGATE_DB", server.DefaultDB), "path of the embedded database")
	fs.Int64Var(&cfg.MaxDBBytes, "max-db-bytes", 0,
		"largest size of each of the embedded database's files (memories, audit log, audit inbox) in bytes: a write past it answers 503 and stores nothing, reads go on (0: no cap)")
	fs.Int64Var(&cfg.IndexMaxBytes, "index-max-bytes", 0,
		"memory budget of the in-memory recall index in bytes: a partition larger than it is refused with 503, never reloaded per search (0: 1 GiB)")
	fs.IntVar(&cfg.IndexApproxMinRows, "index-approx-min-rows", 0,
		"vectors from which a partition's vector search may probe its nearest clusters instead of every row, where that is shown to keep recall (0: 50000; negative: always exact)")
	fs.Int64Var(&cfg.HeapFloor, "heap-floor", 0,
		"bytes the Go heap may grow between two collections at least, so that a small heap is not collected every few dozen recalls; costs up to that much memory (0: 64 MiB, or off when $GOGC is set; negative: off)")
	fs.StringVar(&cfg.Postgres, "postgres", os.Getenv(postgresURLEnv),
		"PostgreSQL URL to use instead of --db (default $MEMGATE_POSTGRES_URL; prefer the variable: a password in a flag shows in the process list)")
	fs.StringVar(&cfg.PolicyFile, "policy", os.Getenv("MEMGATE_POLICY"), "write-gate policy file (JSON; default: the built-in policy)")
	fs.DurationVar(&cfg.SweepEvery, "sweep-every", server.DefaultSweepEvery, "how often expired memories are deleted (0 or less: never)")
	fs.DurationVar(&cfg.SweepGrace, "sweep-grace", server.DefaultSweepGrace, "how long after expiry a memory is kept before the sweep deletes it")
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body-bytes", httpapi.DefaultMaxBodyBytes, "largest JSON request body")
	fs.Float64Var(&rate, "rate", guard.DefaultRatePerSecond, "requests per second per key (token bucket; negative: no limit)")
	fs.IntVar(&burst, "rate-burst", guard.DefaultRateBurst, "requests a key may send at once")
	emb.register(fs)
	llm.register(fs)
	fs.DurationVar(&cfg.RequestTimeout, "request-timeout", guard.DefaultRequestTimeout,
		"longest a call on /v1 or /mcp may take (not chat, import or export) before it answers 503 unavailable (0 or less: no bound)")
	fs.StringVar(&cfg.TLSCert, "tls-cert", "", "PEM certificate file: serve HTTPS only (with --tls-key)")
	fs.StringVar(&cfg.TLSKey, "tls-key", "", "PEM private key file of --tls-cert")
	fs.StringVar(&cfg.Metrics, "metrics", "",
		"where GET /metrics is served on --addr: public (no key), key (an admin key only) or off "+
			"(default: public on a loopback --addr, key beyond it, off with --metrics-addr)")
	fs.StringVar(&cfg.PublicURL, "public-url", os.Getenv("MEMGATE_PUBLIC_URL"),
		"URL clients reach the API at (a proxy's), named in /openapi.json (default $MEMGATE_PUBLIC_URL, else the listen address)")
	fs.Float64Var(&anonRate, "anon-rate", guard.DefaultAnonRatePerSecond,
		"requests per second per client address without a valid key (token bucket; negative: no limit)")
	fs.IntVar(&anonBurst, "anon-rate-burst", guard.DefaultAnonRateBurst, "requests without a valid key a client address may send at once")
	fs.StringVar(&proxies, "trusted-proxies", os.Getenv("MEMGATE_TRUSTED_PROXIES"),
		"comma-separated addresses or CIDR prefixes of proxies whose X-Forwarded-For names the client (default $MEMGATE_TRUSTED_PROXIES; none: the header is ignored)")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", "", "serve GET /metrics without a key on this address of its own (an internal one, for the scraper)")
	fs.StringVar(&cfg.PprofAddr, "pprof-addr", "", "serve Go's profiler (/debug/pprof/) without a key on this loopback address of its own, for profiling")
	fs.BoolVar(&cfg.MCPForget, "mcp-forget", false,
		"offer the MCP tool forget_me on /mcp to keys that may forget (off by default, as memgate mcp's --allow-forget)")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", server.DefaultShutdownTimeout, "how long in-flight requests get to finish on shutdown")
	check := func(pos []string) error {
		if len(pos) > 0 {
			return usageError{"serve takes no arguments"}
		}
		if cfg.Postgres != "" {
			if explicitFlag(fs, "db") {
				return usageError{"--db and --postgres (or $MEMGATE_POSTGRES_URL) name two databases: use one"}
			}
			cfg.DB = ""
		}
		cfg.HeapFloor = heapFloor(cfg.HeapFloor, explicitFlag(fs, "heap-floor"), os.Getenv("GOGC"))
		if cfg.SweepEvery <= 0 {
			cfg.SweepEvery = -1
		}
		if cfg.RequestTimeout <= 0 {
			cfg.RequestTimeout = -1
		}
		if cfg.ShutdownTimeout <= 0 {
			cfg.ShutdownTimeout = time.Nanosecond // shut down at once
		}
		cfg.RateLimit = guard.RateLimit{PerSecond: rate, Burst: burst}
		cfg.AnonRateLimit = guard.RateLimit{PerSecond: anonRate, Burst: anonBurst}
		var err error
		if cfg.TrustedProxies, err = guard.ParseTrustedProxies(proxies); err != nil {
			return usageError{"--trusted-proxies: " + err.Error()}
		}
		if cfg.Embedder, err = emb.embedder(); err != nil {
			return err
		}
		if cfg.LLM, err = llm.model(); err != nil {
			return err
		}
		cfg.Extract = llm.extract
		return nil
	}
	return runCommand(args, e, command[any, struct{}]{fs: fs, check: check,
		call: func(any) (struct{}, error) { return struct{}{}, server.Run(e.ctx, cfg, e.stdout, e.stderr) }})
}

// heapFloor is the heap floor serve runs with: the flag's, or none where
// $GOGC is set and the flag is not given, since the operator's GOGC then
// decides.
func heapFloor(flag int64, explicit bool, gogc string) int64 {
	if gogc != "" && !explicit {
		return -1
	}
	return flag
}
