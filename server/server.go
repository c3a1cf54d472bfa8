// Package server runs memgate's HTTP API as a process: it opens the
// embedded database (or PostgreSQL, with Config.Postgres) and the engine,
// creates the first admin key of an empty database, runs the expiry sweeper, and serves package httpapi's handler
// (with package mcpserver's at /mcp) with timeouts and a graceful shutdown. cmd/memgate's serve command parses
// flags into a Config and calls Run; tests call Run too, on 127.0.0.1:0.
//
// It must never log a secret, memory content or query text: the first
// admin key is written once to stdout (for the operator) and never to the
// log, which carries ids, addresses and timings only.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/memgate/memgate"
	"github.com/memgate/memgate/agent"
	"github.com/memgate/memgate/auth"
	"github.com/memgate/memgate/engine"
	"github.com/memgate/memgate/guard"
	"github.com/memgate/memgate/httpapi"
	"github.com/memgate/memgate/index"
	"github.com/memgate/memgate/inspector"
	"github.com/memgate/memgate/internal/buildinfo"
	"github.com/memgate/memgate/internal/gcfloor"
	"github.com/memgate/memgate/internal/logfmt"
	"github.com/memgate/memgate/internal/serveout"
	"github.com/memgate/memgate/mcpserver"
	"github.com/memgate/memgate/policy"
	"github.com/memgate/memgate/postgres"
	"github.com/memgate/memgate/sqlite"
	"github.com/memgate/memgate/store"
)

// Defaults for Config.
const (
	DefaultAddr            = "127.0.0.1:7070"
	DefaultDB              = "memgate.db"
	DefaultSweepEvery      = time.Hour
	DefaultSweepGrace      = 24 * time.Hour
	DefaultBootstrapTenant = "default"

	// Timeouts of the http.Server. ReadHeaderTimeout bounds slow-loris
	// clients; ReadTimeout and WriteTimeout bound a whole request and
	// response, generously enough for an import of the largest body
	// httpapi accepts; IdleTimeout closes idle keep-alive connections.
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 60 * time.Second
	DefaultWriteTimeout      = 120 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
	// DefaultShutdownTimeout is how long in-flight requests get to finish
	// after a shutdown signal before their connections are closed.
	DefaultShutdownTimeout = 15 * time.Second
	// DefaultHeapFloor is the default Config.HeapFloor, 64 MiB.
	DefaultHeapFloor = 64 << 20
)

// Config configures Run. The zero value serves DefaultDB on DefaultAddr.
type Config struct {
	Addr string // host:port; port 0 picks a free one (the address is printed)
	DB   string // path of the SQLite database (created if missing)
	// MaxDBBytes caps the size of each of the SQLite database's files, the
	// memories', the audit log's and its inbox's (sqlite.WithMaxBytes; 0: no cap). A write that would pass it answers 503 unavailable and
	// stores nothing, while reads go on; deleting memories or restarting
	// with a larger cap makes room. It does not apply to PostgreSQL.
	MaxDBBytes int64
	// IndexMaxBytes is the memory budget of the in-memory recall index
	// (index.Config.MaxBytes; 0: index.DefaultMaxBytes, 1 GiB). A partition
	// larger than it is refused (503 unavailable naming --index-max-bytes),
	// never reloaded per search. IndexApproxMinRows is the number of vectors
	// from which a partition's vector search may use its inverted file
	// (index.Config.ApproxMinRows; 0: index.DefaultApproxMinRows; negative:
	// always exact).
	IndexMaxBytes      int64
	IndexApproxMinRows int
	// HeapFloor is how many bytes the Go heap may grow between two
	// collections at least (package internal/gcfloor; 0: DefaultHeapFloor;
	// negative: GOGC alone decides). The index lives outside the heap, so
	// the live heap is small and GOGC alone collected every few dozen
	// recalls. It costs up to that much memory; it is the process's
	// setting, so of one Run at a time (cmd/memgate leaves it off when
	// $GOGC is set).
	HeapFloor int64
	// Postgres is a PostgreSQL URL: when set, the store is that database
	// (package postgres) instead of the SQLite file, and DB must be empty.
	// Several servers may share it. It may hold a password, which no log
	// line or error shows.
	Postgres string
	// PolicyFile is a write-gate policy file ("" means policy.Default()).
	PolicyFile string
	// Embedder embeds memories and queries (nil: the built-in embedder).
	// One that can probe itself (memgate.Prober: ollama, openai) is probed
	// before the store is opened, so a wrong URL, model, key or dimension
	// fails the start with a clear message.
	Embedder memgate.Embedder
	// LLM is the chat model of POST /v1/chat (package agent: recall, the
	// model call, the exchange remembered); nil answers that route 503
	// with a hint to start with --llm. Extract turns on fact extraction
	// there (agent.Config.Extract).
	LLM     agent.Model
	Extract bool
	// SweepEvery is how often expired memories are deleted (default
	// DefaultSweepEvery; negative turns the sweeper off: reads exclude
	// expired memories anyway). SweepGrace is how long after expiry they
	// are kept (default DefaultSweepGrace).
	SweepEvery time.Duration
	SweepGrace time.Duration
	// BootstrapTenant is the tenant of the admin key created on the first
	// start, when the database holds no key at all.
	BootstrapTenant string

	// MaxBodyBytes is passed to httpapi (zero: its default); RateLimit to
	// the guard, whose one limiter serves every surface (REST and MCP).
	MaxBodyBytes int64
	RateLimit    guard.RateLimit

	// TLSCert and TLSKey are PEM files: with both, the server speaks
	// HTTPS only. Without them it serves cleartext HTTP, and warns when
	// the address is not a loopback one (keys and memories would cross
	// the network in the clear).
	TLSCert, TLSKey string
	// Metrics is where GET /metrics is served on the API's listener
	// (httpapi.MetricsPublic: no key; MetricsKey: an admin key only;
	// MetricsOff). Its figures (forgets and key creations per route, the
	// tenants' memory counts) are not for anyone who can reach the port:
	// the default is MetricsPublic only when the API listens on loopback,
	// MetricsKey beyond it. MetricsAddr, when set, serves it on a listener
	// of its own, without a key (an internal address for the scraper), and
	// then Metrics defaults to MetricsOff.
	Metrics     string
	MetricsAddr string
	// PprofAddr, when set, serves Go's profiler (net/http/pprof under
	// /debug/pprof/) on a listener of its own, without a key. It must be a
	// loopback address: profiles show what the process does, and a heap
	// profile may hold fragments of memories.
	PprofAddr string
	// PublicURL is the URL clients reach the API at (behind a proxy or a
	// load balancer, its address), named in the servers of /openapi.json
	// (httpapi.CheckPublicURL). Empty: the listen address, with http or
	// https. A request's Host is never used.
	PublicURL string
	// AnonRateLimit is the token bucket of each client address for
	// requests without a valid key (guard.Config.AnonRateLimit: zero means
	// its defaults, a negative PerSecond no limit). TrustedProxies are
	// the proxies whose X-Forwarded-For names the client
	// (guard.ParseTrustedProxies); none by default, so the connection's
	// address is the client.
	AnonRateLimit  guard.RateLimit
	TrustedProxies []netip.Prefix
	// MCPForget offers the MCP tool forget_me on /mcp to the keys whose
	// role may forget (off by default: erasing a person is a tool a model
	// sees only where the operator chose so).
	MCPForget bool

	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	// RequestTimeout bounds one call on /v1 and /mcp
	// (guard.Config.RequestTimeout; 0: its default, negative: none).
	RequestTimeout  time.Duration
	IdleTimeout     time.Duration
	MaxHeaderBytes  int
	ShutdownTimeout time.Duration

	// LogLevel is the minimum level of the JSON log (default info).
	LogLevel slog.Level
	// Ready, when set, is called with the listening address once the
	// server accepts connections (tests use it instead of reading stdout).
	Ready func(addr string)
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.DB == "" && c.Postgres == "" {
		c.DB = DefaultDB
	}
	if c.SweepEvery == 0 {
		c.SweepEvery = DefaultSweepEvery
	}
	if c.SweepGrace == 0 {
		c.SweepGrace = DefaultSweepGrace
	}
	if c.BootstrapTenant == "" {
		c.BootstrapTenant = DefaultBootstrapTenant
	}
	if c.HeapFloor == 0 {
		c.HeapFloor = DefaultHeapFloor
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&c.ReadTimeout, DefaultReadTimeout)
	def(&c.WriteTimeout, DefaultWriteTimeout)
	def(&c.IdleTimeout, DefaultIdleTimeout)
	def(&c.ShutdownTimeout, DefaultShutdownTimeout)
	if c.MaxHeaderBytes == 0 {
		c.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if c.Metrics == "" {
		switch {
		case c.MetricsAddr != "":
			c.Metrics = httpapi.MetricsOff
		case loopbackAddr(c.Addr):
			c.Metrics = httpapi.MetricsPublic
		default:
			c.Metrics = httpapi.MetricsKey
		}
	}
	return c
}

// loopbackAddr reports whether the listen address addr (host:port) is
// reachable from this machine only: a loopback IP or "localhost". An
// empty host (every interface) is not.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	switch {
	case c.DB != "" && c.Postgres != "":
		return errors.New("use either a SQLite database (--db) or PostgreSQL (--postgres), not both")
	case c.MaxDBBytes < 0:
		return errors.New("the database size cap (--max-db-bytes) must not be negative")
	case c.IndexMaxBytes < 0:
		return errors.New("the index memory budget (--index-max-bytes) must not be negative")
	case c.MaxDBBytes > 0 && c.Postgres != "":
		return errors.New("the database size cap (--max-db-bytes) applies to the embedded database, not to PostgreSQL")
	case c.Extract && c.LLM == nil:
		return errors.New("fact extraction (--extract) needs a chat model (--llm)")
	case c.SweepGrace < 0:
		return errors.New("sweep grace must not be negative")
	case c.ReadHeaderTimeout < 0 || c.ReadTimeout < 0 || c.WriteTimeout < 0 || c.IdleTimeout < 0 || c.ShutdownTimeout < 0:
		return errors.New("timeouts must not be negative")
	case c.MaxHeaderBytes < 0:
		return errors.New("max header bytes must not be negative")
	case (c.TLSCert == "") != (c.TLSKey == ""):
		return errors.New("TLS needs both a certificate (--tls-cert) and its key (--tls-key)")
	case c.Metrics != httpapi.MetricsPublic && c.Metrics != httpapi.MetricsKey && c.Metrics != httpapi.MetricsOff:
		return fmt.Errorf("metrics must be %s, %s or %s", httpapi.MetricsPublic, httpapi.MetricsKey, httpapi.MetricsOff)
	case c.PprofAddr != "" && !loopbackAddr(c.PprofAddr):
		return errors.New("the profiler (--pprof-addr) must listen on a loopback address, such as 127.0.0.1:6060")
	}
	if c.PublicURL != "" {
		if _, err := httpapi.CheckPublicURL(c.PublicURL); err != nil {
			return fmt.Errorf("--public-url: %w", err)
		}
	}
	return memgate.CheckIdent("bootstrap tenant", c.BootstrapTenant)
}

// Run serves the API until ctx is done (cmd/memgate cancels it on SIGINT
// and SIGTERM), then shuts down gracefully: the listener closes, in-flight
// requests get ShutdownTimeout to finish, the sweeper stops, the engine
// flushes its audit queue, and the database closes. It returns nil after a
// clean shutdown.
//
// stdout receives, on the first start only, the bootstrap admin key and a
// one-line hint, then the line "memgate: serving on http://ADDR" (a parent
// process reads them with serveout.Scan). stderr receives the JSON log.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) (err error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log := logfmt.New(stderr, cfg.LogLevel)
	defer gcfloor.Start(cfg.HeapFloor)() // nothing when the floor is off

	// Bind first (and read the certificate): a busy port or a bad
	// certificate fails the start before a database is created or an
	// admin key printed that nothing serves.
	var tlsConfig *tls.Config
	if cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return fmt.Errorf("TLS certificate %s and key %s: %w", cfg.TLSCert, cfg.TLSKey, err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	defer ln.Close() // until Serve owns it; closing it again is harmless
	var mln net.Listener
	if cfg.MetricsAddr != "" {
		if mln, err = (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.MetricsAddr); err != nil {
			return fmt.Errorf("listen on %s (metrics): %w", cfg.MetricsAddr, err)
		}
		defer mln.Close()
	}
	var pln net.Listener
	if cfg.PprofAddr != "" {
		if pln, err = (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.PprofAddr); err != nil {
			return fmt.Errorf("listen on %s (pprof): %w", cfg.PprofAddr, err)
		}
		defer pln.Close()
	}

	emb, err := startEmbedder(ctx, cfg.Embedder, log)
	if err != nil {
		return err
	}
	pol := policy.Default()
	if cfg.PolicyFile != "" {
		p, err := policy.Load(cfg.PolicyFile)
		if err != nil {
			return fmt.Errorf("policy %s: %w", cfg.PolicyFile, err)
		}
		pol = p
	}
	created := false
	if cfg.Postgres == "" {
		existed, err := DatabaseExists(cfg.DB)
		if err != nil {
			return err
		}
		created = !existed
	}
	db, where, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	if created {
		log.Info("created a new database", "db", cfg.DB)
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close database: %w", cerr)
		}
	}()
	eng, err := engine.New(engine.Config{Store: db, Embedder: emb, Policy: pol, Logger: log,
		Index: index.Config{MaxBytes: cfg.IndexMaxBytes, ApproxMinRows: cfg.IndexApproxMinRows}})
	if err != nil {
		return err
	}
	// Deferred after db.Close, so it runs first: the audit queue is
	// flushed into a database that is still open.
	defer eng.Close()
	// Calibrate the embedder now (once per model and database: the probe
	// set's vectors are kept in the store), so no recall waits for it.
	if err := eng.Calibrate(ctx); err != nil {
		return fmt.Errorf("embedder: %w", err)
	}

	if err := bootstrap(ctx, db, cfg.BootstrapTenant, newKeyCommand(cfg), stdout, log); err != nil {
		return err
	}

	var chat *agent.Agent
	if cfg.LLM != nil {
		if chat, err = agent.New(agent.Config{Engine: eng, Model: cfg.LLM, Extract: cfg.Extract, Logger: log}); err != nil {
			return err
		}
	}
	// One guard below every surface: authentication, the rate limiter,
	// the request deadline and every authorization decision.
	g, err := guard.New(guard.Config{Engine: eng, RateLimit: cfg.RateLimit, AnonRateLimit: cfg.AnonRateLimit,
		TrustedProxies: cfg.TrustedProxies, RequestTimeout: cfg.RequestTimeout, Logger: log})
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
		ln = tls.NewListener(ln, tlsConfig) // closing it closes the TCP listener
	} else if !loopback(ln.Addr()) {
		log.Warn("serving cleartext HTTP beyond loopback: API keys and memories cross the network unencrypted; "+
			"use --tls-cert and --tls-key, or a TLS proxy in front", "addr", addr)
	}
	publicURL := scheme + "://" + addr
	if cfg.PublicURL != "" {
		publicURL, _ = httpapi.CheckPublicURL(cfg.PublicURL) // checked by Validate
	}
	handler, err := httpapi.New(httpapi.Config{
		Guard:        g,
		Logger:       log,
		MaxBodyBytes: cfg.MaxBodyBytes,
		Agent:        chat,
		Metrics:      cfg.Metrics,
		PublicURL:    publicURL,
	})
	if err != nil {
		return err
	}
	mcpHandler, err := mcpserver.NewHTTPHandler(mcpserver.HTTPConfig{
		Version: buildinfo.Get().Version,
		Guard:   g, AllowForget: cfg.MCPForget, Logger: log, MaxBodyBytes: cfg.MaxBodyBytes,
	})
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           routes(handler, mcpHandler),
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	srv.TLSConfig = tlsConfig
	if mln != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", httpapi.MetricsHandler(handler))
		msrv := &http.Server{Handler: mux, ReadHeaderTimeout: cfg.ReadHeaderTimeout, WriteTimeout: cfg.WriteTimeout,
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
		go msrv.Serve(mln)
		defer msrv.Close()
		log.Info("serving metrics", "addr", mln.Addr().String())
	}
	if pln != nil {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
		psrv := &http.Server{Handler: mux, ReadHeaderTimeout: cfg.ReadHeaderTimeout,
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
		go psrv.Serve(pln)
		defer psrv.Close()
		log.Info("serving the profiler", "addr", pln.Addr().String())
	}

	// The sweeper runs with the engine's actor for the audit log and stops
	// before the engine closes.
	var wg sync.WaitGroup
	sweepCtx, stopSweep := context.WithCancel(engine.WithActor(context.WithoutCancel(ctx), "sweeper"))
	defer func() {
		stopSweep()
		wg.Wait()
	}()
	if cfg.SweepEvery > 0 {
		wg.Go(func() { eng.RunSweeper(sweepCtx, cfg.SweepEvery, cfg.SweepGrace) })
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("serving", "version", buildinfo.Get().String(), "addr", addr, "public_url", publicURL, "metrics", cfg.Metrics, "tls", tlsConfig != nil, "db", where, "max_db_bytes", cfg.MaxDBBytes, "index_max_bytes", cfg.IndexMaxBytes, "heap_floor", cfg.HeapFloor, "sweep_every", cfg.SweepEvery.String(), "chat", chat != nil, "extract", chat != nil && cfg.Extract)
	serveout.PrintServingURL(stdout, scheme+"://"+addr)
	if cfg.Ready != nil {
		cfg.Ready(addr)
	}

	select {
	case err := <-served:
		// Serve returned before any shutdown: the listener failed.
		return fmt.Errorf("serve on %s: %w", addr, err)
	case <-ctx.Done():
	}
	start := time.Now()
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		// The deadline passed with requests still running: cut them off.
		log.Warn("shutdown deadline passed; closing open connections", "err", err.Error())
		srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve on %s: %w", addr, err)
	}
	stopSweep()
	wg.Wait()
	if err := eng.Close(); err != nil {
		return fmt.Errorf("close engine: %w", err)
	}
	log.Info("stopped", "took", time.Since(start).String())
	return nil
}

// newKeyCommand is the command that makes a new admin key of the
// bootstrap tenant in cfg's database (the PostgreSQL URL as its variable,
// never the URL itself: it may hold a password).
func newKeyCommand(cfg Config) string {
	where := "--db " + shellQuote(cfg.DB)
	if cfg.Postgres != "" {
		where = "--postgres \"$MEMGATE_POSTGRES_URL\""
	}
	return "memgate keys create " + where + " --tenant " + cfg.BootstrapTenant + " --role admin"
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_./:@+=,.
func shellQuote(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@+=,", r)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}

// DatabaseExists reports whether something is at path, the embedded
// database's file: serve and every CLI command ask it before opening. A
// missing parent directory is an error saying so (SQLite creates the
// file, not its directory); another error than the file's absence is
// returned as is.
func DatabaseExists(path string) (bool, error) {
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return true, nil
	case !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("database %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return false, fmt.Errorf("database %s: the directory %s does not exist: create it (mkdir -p %s) or name another path with --db", path, dir, shellQuote(dir))
	}
	return false, nil
}

// loopback reports whether a is a loopback address (127.0.0.0/8, ::1): a
// server listening on any other, or on every address, is reachable from
// the network.
func loopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// routes puts the web inspector and the MCP endpoint beside the API: the
// page at / and its assets under inspector.Prefix, the streamable HTTP MCP
// transport at /mcp (package mcpserver: every request authenticated with
// its bearer key, like the API's); every other path is the API's (which
// answers 404 in its own error shape).
func routes(api, mcp http.Handler) http.Handler {
	mux := http.NewServeMux()
	ui := inspector.Handler()
	mux.Handle("GET /{$}", ui)
	mux.Handle("GET "+inspector.Prefix, ui)
	mux.Handle("/mcp", mcp)
	mux.Handle("/", api)
	return mux
}

// openStore opens the store cfg names and returns it with a description
// for the log: the SQLite path, or the PostgreSQL URL with its password
// masked.
func openStore(ctx context.Context, cfg Config) (store.Store, string, error) {
	if cfg.Postgres != "" {
		where := postgres.RedactURL(cfg.Postgres)
		db, err := postgres.Open(ctx, postgres.Config{URL: cfg.Postgres})
		if err != nil {
			return nil, "", fmt.Errorf("open PostgreSQL: %w", err) // postgres.Open names the redacted URL
		}
		return db, where, nil
	}
	db, err := sqlite.Open(ctx, cfg.DB, sqlite.WithMaxBytes(cfg.MaxDBBytes))
	if err != nil {
		return nil, "", fmt.Errorf("open database %s: %w", cfg.DB, err)
	}
	return db, cfg.DB, nil
}

// bootstrap creates an admin key for tenant when the database holds no key
// at all, and writes its secret to stdout once, with a hint. A database
// with keys, revoked ones included, is left alone: from then on keys are
// managed with "memgate keys".
func bootstrap(ctx context.Context, db store.Store, tenant, newKey string, stdout io.Writer, log *slog.Logger) error {
	secret, rec, err := auth.NewKey(memgate.Key{Tenant: tenant, Role: memgate.RoleAdmin, Name: "created by the first serve"})
	if err != nil {
		return err
	}
	created, err := db.CreateFirstKey(ctx, rec)
	if err != nil {
		return fmt.Errorf("create the first admin key: %w", err)
	}
	if !created {
		// The database has keys: another start, or "memgate keys", made
		// them. Say how to make an admin key, should the first be lost.
		serveout.PrintKeysExist(stdout, newKey)
		return nil
	}
	log.Info("created the first admin key", "key_id", rec.ID, "tenant", rec.Tenant)
	serveout.PrintAdminKey(stdout, tenant, secret)
	return nil
}
