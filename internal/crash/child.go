package crash

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/memgate/memgate/internal/serveout"
)

// child is one `memgate serve` process.
type child struct {
	cmd  *exec.Cmd
	url  string        // http://ADDR, without a trailing slash
	done chan struct{} // closed once the process is reaped
}

// writePolicy writes the policy the children serve with: the default one
// with dedup off, so that a re-sent content is stored again unless its
// idempotency key prevents it.
func writePolicy(dir string) (string, error) {
	p := filepath.Join(dir, "policy.json")
	return p, os.WriteFile(p, []byte(`{"dedup": false}`+"\n"), 0o600)
}

// start runs replica i (its log appended to replica-i.log in the run's
// directory) and returns once it answers /healthz. The first start over an
// empty database prints the admin key, which the run keeps.
func (r *run) start(ctx context.Context, i int) (*child, error) {
	logf, err := os.OpenFile(filepath.Join(r.dir, fmt.Sprintf("replica-%d.log", i+1)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child holds its own descriptor
	args := []string{"serve", "--addr", "127.0.0.1:0", "--rate", "-1", "--policy", r.policy}
	// Neither variable may reach the child: $MEMGATE_POSTGRES_URL would
	// clash with --db, $MEMGATE_DB would be ignored but confuses a reader.
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "MEMGATE_POSTGRES_URL=") || strings.HasPrefix(kv, "MEMGATE_DB=")
	})
	if r.cfg.Postgres != "" {
		env = append(env, "MEMGATE_POSTGRES_URL="+r.cfg.Postgres) // not in the process list
	} else {
		args = append(args, "--db", r.cfg.SQLite)
	}
	cmd := exec.Command(r.cfg.Binary, args...)
	cmd.Env = env
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", r.cfg.Binary, err)
	}
	c := &child{cmd: cmd, done: make(chan struct{})}
	ready := make(chan serveout.Banner, 1)
	go func() {
		defer close(c.done)
		serveout.Scan(out, func(b serveout.Banner) { ready <- b })
		cmd.Wait()
	}()
	var s serveout.Banner
	select {
	case s = <-ready:
	case <-c.done:
		err = errors.New("it exited before serving")
	case <-time.After(r.cfg.ReadyTimeout):
		err = fmt.Errorf("it did not serve within %s", r.cfg.ReadyTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err == nil {
		if s.Key != "" {
			if r.key != "" {
				err = errors.New("it created an admin key in a database that had one")
			}
			r.key = "Bearer " + s.Key
		} else if r.key == "" {
			err = errors.New("it printed no admin key: the database is not new")
		}
	}
	if err == nil {
		c.url = s.URL
		err = r.healthy(ctx, c)
	}
	if err != nil {
		c.kill()
		return nil, fmt.Errorf("replica %d: %w (log: %s)", i+1, err, filepath.Join(r.dir, fmt.Sprintf("replica-%d.log", i+1)))
	}
	return c, nil
}

// healthy polls /healthz until it answers 200.
func (r *run) healthy(ctx context.Context, c *child) error {
	deadline := time.Now().Add(r.cfg.ReadyTimeout)
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", c.url+"/healthz", nil)
		resp, err := r.hc.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("/healthz answered %d", resp.StatusCode)
		}
		select {
		case <-c.done:
			return errors.New("it exited before answering /healthz")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return err
		}
	}
}

// kill sends SIGKILL (no chance to flush, close or checkpoint anything) and
// waits until the process is reaped. Killing a reaped child does nothing.
func (c *child) kill() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGKILL) // os.Process.Kill, said out loud
	<-c.done
}

// stop sends SIGTERM and waits for the graceful shutdown (up to 30 s, then
// SIGKILL).
func (c *child) stop() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		c.kill()
	}
}

// targets is where the writers send requests: one URL per replica, "" while
// it is down. Safe for concurrent use.
type targets struct {
	mu      sync.Mutex
	urls    []string
	flying  []int64       // requests in flight per replica
	changed chan struct{} // closed and replaced when a replica comes up
	rr      int
}

func (t *targets) init(n int) {
	t.urls = make([]string, n)
	t.flying = make([]int64, n)
	t.changed = make(chan struct{})
}

func (t *targets) up(i int, url string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.urls[i] = url
	close(t.changed)
	t.changed = make(chan struct{})
}

func (t *targets) down(i int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.urls[i] = ""
}

func (t *targets) inflight(i int) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.flying[i]
}

// pick returns the next replica that is up (round-robin) and counts a
// request in flight to it; done must be called when it is answered. With
// none up it returns ok false and a channel closed when one comes up.
func (t *targets) pick(avoid int) (i int, url string, wait <-chan struct{}, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.urls)
	for range n {
		t.rr = (t.rr + 1) % n
		if t.urls[t.rr] != "" && (t.rr != avoid || n == 1) {
			t.flying[t.rr]++
			return t.rr, t.urls[t.rr], nil, true
		}
	}
	if avoid >= 0 && t.urls[avoid] != "" {
		t.flying[avoid]++
		return avoid, t.urls[avoid], nil, true
	}
	return -1, "", t.changed, false
}

func (t *targets) done(i int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.flying[i]--
}
