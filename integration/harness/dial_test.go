package harness

import (
	"context"
	"errors"
	"net"
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

func TestProbe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()
	if err := Probe(ctx, []string{deadAddr, l.Addr().String()}); err != nil {
		t.Errorf("one host listens: %v", err)
	}
	err = Probe(ctx, []string{deadAddr})
	var he *HostError
	if !errors.As(err, &he) || he.Host != deadAddr || !errors.Is(err, ErrHostDown) {
		t.Errorf("refused: %v", err)
	}
	if err := Probe(ctx, nil); err == nil {
		t.Error("no hosts probed fine")
	}
}
