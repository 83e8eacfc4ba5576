package harness

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestStartNamedHostsFailFast: hosts a user names get no five-minute wait. A refused
// port fails at once, whatever the start timeout; one that accepts TCP and never speaks
// CQL fails within the start timeout, not gocql's own.
func TestStartNamedHostsFailFast(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	l.Close()

	ctx := context.Background()
	start := time.Now()
	n, err := Start(ctx, WithHosts(refused), WithLogger(QuietLogger()))
	n.Close(ctx)
	var he *HostError
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrHostDown) || !errors.As(err, &he) || he.Host != refused {
		t.Fatalf("refused host: err = %v, want ErrUnavailable and a *HostError for %s", err, refused)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refused host took %v with the default start timeout", d)
	}

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start = time.Now()
	n, err = Start(ctx, WithHosts(silent.Addr().String()), WithStartTimeout(2*time.Second), WithLogger(QuietLogger()))
	n.Close(ctx)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("silent host: err = %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("silent host took %v with a 2s start timeout", d)
	}
}

// fakeHost listens on loopback and serves each connection with serve.
func fakeHost(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return l.Addr().String()
}

// cqlServer answers OPTIONS with an empty SUPPORTED frame, as Cassandra would.
func cqlServer(c net.Conn) {
	var head [9]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		return
	}
	c.Write([]byte{0x84, 0, head[2], head[3], 0x06, 0, 0, 0, 2, 0, 0})
}

// TestProbe: each kind of host a user can name, alone and beside a working one.
func TestProbe(t *testing.T) {
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := dead.Addr().String()
	dead.Close()
	good := fakeHost(t, cqlServer)
	silent := fakeHost(t, func(c net.Conn) { time.Sleep(10 * time.Second) })
	closing := fakeHost(t, func(c net.Conn) { c.Read(make([]byte, 64)) })
	garbage := fakeHost(t, func(c net.Conn) { c.Read(make([]byte, 64)); c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n")) })
	for _, tc := range []struct {
		name  string
		hosts []string
		up    []string
		want  string // in the error when none answers
		max   time.Duration
	}{
		{"refused", []string{refused}, nil, "refused the connection", time.Second},
		{"silent", []string{silent}, nil, "gave no CQL answer within", 3 * time.Second},
		{"closes", []string{closing}, nil, "closed the connection without a CQL answer", time.Second},
		{"not CQL", []string{garbage}, nil, "not in CQL", time.Second},
		{"refused and silent", []string{refused, silent}, nil, refused + " refused the connection", 3 * time.Second},
		{"silent beside a working one", []string{silent, good}, []string{good}, "", time.Second},
		{"working, refused, closing", []string{good, refused, closing}, []string{good}, "", time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			start := time.Now()
			up, err := Probe(ctx, tc.hosts, nil)
			if d := time.Since(start); d > tc.max {
				t.Errorf("took %v, want at most %v", d, tc.max)
			}
			if tc.up != nil {
				if err != nil || !slices.Equal(up, tc.up) {
					t.Errorf("up %v, %v; want %v", up, err, tc.up)
				}
				return
			}
			var he *HostError
			if !errors.As(err, &he) || !errors.Is(err, ErrHostDown) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a *HostError saying %q", err, tc.want)
			}
			for _, h := range tc.hosts {
				if !strings.Contains(he.Host, h) {
					t.Errorf("%q does not name %s", he.Host, h)
				}
			}
		})
	}
	if _, err := Probe(context.Background(), nil, nil); err == nil {
		t.Error("no hosts probed fine")
	}
}
