package harness

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
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

// probeGrace is how long Probe still waits for the other hosts once one has answered:
// a silent host beside a working one costs this, not the whole timeout.
const probeGrace = 300 * time.Millisecond

// Probe asks every host at once, in CQL, whether it is a Cassandra node: it connects
// (over TLS when tlsConf is not nil), sends OPTIONS and waits for the answer. It returns
// the hosts that answered, in the order given, as soon as one has and the others have had
// a moment more; when none answers before ctx ends, an error naming each host and what
// happened (*HostError, matching ErrHostDown). It tells "nothing listens there", "unknown
// host", "not Cassandra's port" and "silent" apart in milliseconds where gocql would
// retry its control connection until a timeout — and it keeps a silent host out of the
// contact points, where gocql could spend its connect timeout on it before trying a
// working one.
func Probe(ctx context.Context, hosts []string, tlsConf *tls.Config) ([]string, error) {
	up, _, err := ProbeHosts(ctx, hosts, tlsConf)
	return up, err
}

// ProbeHosts is Probe, and also says which hosts did not answer (each a *HostError, in
// the order given) when others did: a contact point left out is named, not dropped in
// silence.
func ProbeHosts(ctx context.Context, hosts []string, tlsConf *tls.Config) (up []string, down []*HostError, err error) {
	if len(hosts) == 0 {
		return nil, nil, errors.New("harness: no hosts to probe")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		i   int
		err *HostError
	}
	answers := make(chan answer, len(hosts))
	start := time.Now()
	for i, h := range hosts {
		go func() { answers <- answer{i, probeOne(ctx, h, tlsConf, start)} }()
	}
	ok := make([]bool, len(hosts))
	var failed []*HostError
	var grace <-chan time.Time
	for pending := len(hosts); pending > 0; pending-- {
		var a answer
		select {
		case a = <-answers:
		case <-grace:
			pending = 0
			continue
		}
		if a.err != nil {
			failed = append(failed, a.err)
			continue
		}
		ok[a.i] = true
		if grace == nil {
			grace = time.After(probeGrace)
		}
	}
	for i, h := range hosts {
		if ok[i] {
			up = append(up, h)
		}
	}
	if len(up) > 0 {
		for _, h := range hosts {
			if slices.Contains(up, h) {
				continue
			}
			hostErr := &HostError{Host: h, Reason: fmt.Sprintf("gave no CQL answer within %v of another host", probeGrace), Err: ErrHostDown}
			for _, f := range failed {
				if f.Host == h {
					hostErr = f
				}
			}
			down = append(down, hostErr)
		}
		return up, down, nil
	}
	if len(failed) == 1 {
		return nil, nil, failed[0]
	}
	// Several named hosts, none answered: name each, in the order given.
	slices.SortFunc(failed, func(a, b *HostError) int { return slices.Index(hosts, a.Host) - slices.Index(hosts, b.Host) })
	names, reasons := make([]string, len(failed)), make([]string, len(failed))
	for i, f := range failed {
		names[i], reasons[i] = f.Host, f.Host+" "+f.Reason
	}
	return nil, nil, &HostError{Host: strings.Join(names, ", "), Reason: strings.Join(reasons, "; "), Err: failed[0].Err}
}

// cqlOptions is an OPTIONS request in native protocol v4: version, flags, stream 0,
// opcode 0x05, no body. Any Cassandra answers it, with SUPPORTED (0x06) or, for a
// version it does not speak, an ERROR (0x00) — both in a response frame (version | 0x80).
var cqlOptions = []byte{0x04, 0, 0, 0, 0x05, 0, 0, 0, 0}

// probeOne is Probe for one host: nil when it answered in CQL.
func probeOne(ctx context.Context, host string, tlsConf *tls.Config, start time.Time) *HostError {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return &HostError{Host: host, Reason: dialReason(ctx, err), Err: err}
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	silent := func(err error) *HostError {
		return &HostError{Host: host, Err: err, Reason: fmt.Sprintf("accepted TCP but gave no CQL answer within %s (is it Cassandra's native port, usually 9042? is the node still starting?)",
			time.Since(start).Round(100*time.Millisecond))}
	}
	if tlsConf != nil {
		conf := tlsConf.Clone()
		if conf.ServerName == "" && !conf.InsecureSkipVerify {
			conf.ServerName, _, _ = net.SplitHostPort(host)
		}
		tc := tls.Client(c, conf)
		if err := tc.HandshakeContext(ctx); err != nil {
			if ctx.Err() != nil {
				return silent(err)
			}
			return &HostError{Host: host, Err: err, Reason: "TLS handshake failed: " + err.Error()}
		}
		c = tc
	}
	var head [9]byte
	_, err = c.Write(cqlOptions)
	if err == nil {
		_, err = io.ReadFull(c, head[:])
	}
	switch {
	case err == nil && head[0]&0x80 != 0 && (head[4] == 0x06 || head[4] == 0x00):
		return nil
	case err == nil:
		return &HostError{Host: host, Reason: "answered, but not in CQL (is it Cassandra's native port, usually 9042?)"}
	case ctx.Err() != nil:
		return silent(err)
	case tlsConf == nil:
		return &HostError{Host: host, Err: err, Reason: "closed the connection without a CQL answer (is it Cassandra's native port, usually 9042? a port that wants TLS: give --tls-ca)"}
	}
	return &HostError{Host: host, Err: err, Reason: "closed the connection without a CQL answer (is it Cassandra's native port, usually 9042?)"}
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
