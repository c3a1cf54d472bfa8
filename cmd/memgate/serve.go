package main

import (
	"os"
	"time"

	"github.com/memgate/memgate/httpapi"
	"github.com/memgate/memgate/server"
)

func cmdServe(e env, args []string) error {
	var cfg server.Config
	var rate float64
	var burst int
	fs := newFlagSet("serve", e.stderr, "[--addr 127.0.0.1:7070] [--db memgate.db] [--policy FILE] [flags]")
	def := os.Getenv("MEMGATE_DB")
	if def == "" {
		def = server.DefaultDB
	}
	fs.StringVar(&cfg.Addr, "addr", server.DefaultAddr, "address to listen on (port 0 picks a free port)")
	fs.StringVar(&cfg.DB, "db", def, "path of the embedded database")
	fs.StringVar(&cfg.PolicyFile, "policy", os.Getenv("MEMGATE_POLICY"), "write-gate policy file (JSON; default: the built-in policy)")
	fs.DurationVar(&cfg.SweepEvery, "sweep-every", server.DefaultSweepEvery, "how often expired memories are deleted (0 or less: never)")
	fs.DurationVar(&cfg.SweepGrace, "sweep-grace", server.DefaultSweepGrace, "how long after expiry a memory is kept before the sweep deletes it")
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body-bytes", httpapi.DefaultMaxBodyBytes, "largest JSON request body")
	fs.Float64Var(&rate, "rate", httpapi.DefaultRatePerSecond, "requests per second per key (token bucket; negative: no limit)")
	fs.IntVar(&burst, "rate-burst", httpapi.DefaultRateBurst, "requests a key may send at once")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", server.DefaultShutdownTimeout, "how long in-flight requests get to finish on shutdown")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError{"serve takes no arguments"}
	}
	if cfg.SweepEvery <= 0 {
		cfg.SweepEvery = -1
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = time.Nanosecond // shut down at once
	}
	cfg.RateLimit = httpapi.RateLimit{PerSecond: rate, Burst: burst}
	return server.Run(e.ctx, cfg, e.stdout, e.stderr)
}
