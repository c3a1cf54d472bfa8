package postgres

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memgate/memgate"
)

// TestConnectFailuresAreUnavailable connects to servers that fail in the
// ways a restarting or hung PostgreSQL does, and checks each driver error
// is unavailable: a refused connection, a connection closed before the
// handshake, and one that never answers until the connect timeout (whose
// error wraps context.DeadlineExceeded although the caller's context is
// live: it once passed through as the caller's own deadline and answered
// 500). Control: the caller's own expired deadline still passes through.
func TestConnectFailuresAreUnavailable(t *testing.T) {
	t.Parallel()
	listen := func(serve func(net.Conn)) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go serve(c)
			}
		}()
		return ln.Addr().String()
	}
	refused := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}()
	closes := listen(func(c net.Conn) { c.Close() })
	silent := listen(func(c net.Conn) {
		time.Sleep(5 * time.Second)
		c.Close()
	})
	connect := func(ctx context.Context, addr string) error {
		conn, err := pgx.Connect(ctx, "postgres://u:secret@"+addr+"/db?sslmode=disable&connect_timeout=1")
		if err == nil {
			conn.Close(ctx)
		}
		return err
	}
	for name, addr := range map[string]string{"refused": refused, "closed": closes, "connect timeout": silent} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := connect(context.Background(), addr)
			if err == nil {
				t.Fatal("connected")
			}
			got := interpretError(context.Background(), "op", err)
			if memgate.ErrorCode(got) != memgate.EUNAVAILABLE || memgate.ErrorMessage(got) != errUnreachable().Message {
				t.Fatalf("%v: got %s %q, want unavailable", err, memgate.ErrorCode(got), memgate.ErrorMessage(got))
			}
		})
	}
	t.Run("caller's deadline", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		err := connect(ctx, silent)
		if got := interpretError(ctx, "op", err); got != context.DeadlineExceeded {
			t.Fatalf("%v: got %v, want the caller's context.DeadlineExceeded", err, got)
		}
	})
}
