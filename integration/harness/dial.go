package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/gocql/gocql"
)

// ErrHostDown is matched (errors.Is) by the *HostError of a host that refused the
// connection, could not be reached or never answered CQL.
var ErrHostDown = errors.New("harness: host does not answer")

// HostError says which named host failed and how, in words a user can act on.
type HostError struct {
	Host   string // host:port as given
	Reason string // "refused the connection (nothing listens there)", …
	Err    error  // the underlying error, if any
}

func (e *HostError) Error() string { return e.Host + ": " + e.Reason }

// Unwrap returns the underlying error and ErrHostDown.
func (e *HostError) Unwrap() []error { return []error{e.Err, ErrHostDown} }

// Probe dials every host over TCP at once and returns nil as soon as one accepts; when
// none does before ctx ends, the *HostError of the first host. It sends nothing: it tells
// "nothing listens there" and "unknown host" apart from a slow node in milliseconds
// instead of letting gocql retry its control connection until a timeout.
func Probe(ctx context.Context, hosts []string) error {
	if len(hosts) == 0 {
		return errors.New("harness: no hosts to probe")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(hosts))
	for _, h := range hosts {
		go func() {
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", h)
			if err == nil {
				c.Close()
				errs <- nil
				return
			}
			errs <- &HostError{Host: h, Reason: dialReason(ctx, err), Err: err}
		}()
	}
	failed := make(map[string]error, len(hosts))
	for range hosts {
		err := <-errs
		if err == nil {
			return nil
		}
		failed[err.(*HostError).Host] = err
	}
	return failed[hosts[0]]
}

func dialReason(ctx context.Context, err error) string {
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused the connection (nothing listens on that port)"
	case errors.As(err, &dns):
		return "unknown host (" + dns.Err + ")"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "cannot be reached (no route to host)"
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return "did not accept a TCP connection in time"
	}
	return err.Error()
}

// CreateSession is cl.CreateSession bounded by ctx: gocql's own connect does not take
// a context and, against a host that accepts TCP but never speaks CQL, can take far
// longer than cl.ConnectTimeout. A session that arrives after ctx ended is closed.
func CreateSession(ctx context.Context, cl *gocql.ClusterConfig) (*gocql.Session, error) {
	type result struct {
		s   *gocql.Session
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		s, err := cl.CreateSession()
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		return r.s, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.s != nil {
				r.s.Close()
			}
		}()
		return nil, &HostError{Host: strings.Join(cl.Hosts, ","), Err: ctx.Err(),
			Reason: fmt.Sprintf("accepted TCP but gave no CQL answer within %s (is it Cassandra's native port, usually 9042? is the node still starting?)",
				time.Since(start).Round(100*time.Millisecond))}
	}
}

// quietLogger discards gocql's log lines.
type quietLogger struct{}

func (quietLogger) Print(...any)          {}
func (quietLogger) Printf(string, ...any) {}
func (quietLogger) Println(...any)        {}

// QuietLogger returns a gocql.StdLogger that discards everything: for
// ClusterConfig.Logger where gocql's reconnect chatter would drown the caller's output.
func QuietLogger() gocql.StdLogger { return quietLogger{} }
