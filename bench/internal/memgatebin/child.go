package memgatebin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/memgate/memgate/internal/serveout"
)

// Child is a running `memgate serve`: the URL it serves on and, when it
// created the database, the admin key it printed (else empty).
type Child struct {
	Cmd  *exec.Cmd
	URL  string
	Key  string
	done chan error
}

// Env is this process's environment without MEMGATE_POSTGRES_URL, serve's
// default for --postgres, plus extra.
func Env(extra ...string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "MEMGATE_POSTGRES_URL=") })
	return append(env, extra...)
}

// Start runs "bin args..." with env, its stderr (the JSON log) in a new
// file at logPath, and returns once it prints the address it serves on:
// at most 30 s, or until ctx is done.
func Start(ctx context.Context, bin string, args, env []string, logPath string) (*Child, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child holds its own descriptor
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Stderr = env, logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &Child{Cmd: cmd, done: make(chan error, 1)}
	ready := make(chan serveout.Banner, 1)
	exited := make(chan struct{})
	go func() {
		if !serveout.Scan(out, func(b serveout.Banner) { ready <- b }) {
			close(exited)
		}
		c.done <- cmd.Wait()
	}()
	select {
	case b := <-ready:
		c.URL, c.Key = b.URL, b.Key
		return c, nil
	case <-exited:
		err = errors.New("it exited before serving")
	case <-time.After(30 * time.Second):
		err = errors.New("it did not serve within 30 s")
	case <-ctx.Done():
		err = ctx.Err()
	}
	c.Stop()
	return nil, fmt.Errorf("start memgate serve: %w (log: %s)", err, logPath)
}

// Stop sends SIGTERM and waits up to 20 s for the child to exit, then kills
// it. It returns how the child exited: nil after a clean shutdown.
func (c *Child) Stop() error {
	_ = c.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-c.done:
		return err
	case <-time.After(20 * time.Second):
		_ = c.Cmd.Process.Kill()
		<-c.done
		return errors.New("it did not stop within 20 s after SIGTERM and was killed")
	}
}
