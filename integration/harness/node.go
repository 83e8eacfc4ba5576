package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gocql/gocql"
	tccassandra "github.com/testcontainers/testcontainers-go/modules/cassandra"
)

// ErrUnavailable is returned by Start when no Cassandra could be found or started.
var ErrUnavailable = errors.New("harness: no Cassandra available")

// PathError says why one way of getting a Cassandra failed and what to do about it.
type PathError struct {
	Path   string // "hosts", "docker" or "native"
	Reason string
	Fix    string
}

func (e *PathError) Error() string { return e.Path + ": " + e.Reason }

// UnavailableError is Start's error when every way failed: one entry per path tried, in
// order. errors.Is(err, ErrUnavailable) holds.
type UnavailableError struct{ Tried []*PathError }

func (e *UnavailableError) Error() string {
	var b strings.Builder
	b.WriteString("harness: no Cassandra available; tried, in order:")
	for i, p := range e.Tried {
		fmt.Fprintf(&b, "\n  %d. %s: %s\n     -> %s", i+1, p.Path, p.Reason, p.Fix)
	}
	return b.String()
}

func (e *UnavailableError) Unwrap() error { return ErrUnavailable }

// Node is a running Cassandra: a container or native node the harness started, or a
// cluster named by CQLSAFE_CASSANDRA_HOSTS. A nil *Node is valid: its test helpers skip
// (or fail, when Cassandra is required).
type Node struct {
	hosts      []string
	translator gocql.AddressTranslator
	container  *tccassandra.CassandraContainer
	native     *nativeNode
	nodetool   []string
	version    string
	source     string
	startErr   error
	logger     gocql.StdLogger

	mu       sync.Mutex // held while restartNative replaces native
	restarts int
}

// Option configures Start.
type Option func(*config) error

type config struct {
	hosts        []string
	image        string
	imageSet     bool
	version      string
	versionSet   bool
	paths        []string
	startTimeout time.Duration
	progress     func(string)
	logger       gocql.StdLogger
}

// The ways Start can get a Cassandra besides CQLSAFE_CASSANDRA_HOSTS, in its default order.
const (
	PathDocker = "docker"
	PathNative = "native"
)

// defaults: hosts from CQLSAFE_CASSANDRA_HOSTS, image from CQLSAFE_CASSANDRA_IMAGE or
// DefaultImage, version from CQLSAFE_CASSANDRA_VERSION or DefaultVersion, paths from
// CQLSAFE_CASSANDRA_PATHS or docker then native, 5 minutes to become ready, progress
// discarded.
func defaults() (config, error) {
	c := config{image: DefaultImage, version: DefaultVersion, paths: []string{PathDocker, PathNative},
		startTimeout: 5 * time.Minute, progress: func(string) {}}
	if img := strings.TrimSpace(os.Getenv(EnvImage)); img != "" {
		c.image, c.imageSet = img, true
	}
	if v := strings.TrimSpace(os.Getenv(EnvVersion)); v != "" {
		if err := WithVersion(v)(&c); err != nil {
			return c, err
		}
	}
	if p := strings.TrimSpace(os.Getenv(EnvPaths)); p != "" {
		if err := WithPaths(strings.Split(p, ",")...)(&c); err != nil {
			return c, err
		}
	}
	if h := strings.TrimSpace(os.Getenv(EnvHosts)); h != "" {
		hosts, err := ParseHosts(h)
		if err != nil {
			return c, err
		}
		c.hosts = hosts
	}
	return c, nil
}

// WithHosts uses a running cluster instead of starting one.
func WithHosts(hosts ...string) Option {
	return func(c *config) error {
		parsed, err := ParseHosts(strings.Join(hosts, ","))
		if err != nil {
			return err
		}
		c.hosts = parsed
		return nil
	}
}

// WithImage sets the image testcontainers starts.
func WithImage(image string) Option {
	return func(c *config) error {
		if strings.TrimSpace(image) == "" {
			return errors.New("harness: empty image name")
		}
		c.image, c.imageSet = image, true
		return nil
	}
}

// WithVersion sets the Apache Cassandra version of the native node (e.g. "4.1.10") and,
// unless an image is named, the Docker image (cassandra:<version>, or the local
// cqlsafe/cassandra:<version>-local that scripts/build-image.sh builds).
func WithVersion(version string) Option {
	return func(c *config) error {
		version = strings.TrimSpace(version)
		if !versionPattern.MatchString(version) {
			return fmt.Errorf("harness: bad Cassandra version %q (want e.g. %s)", version, DefaultVersion)
		}
		c.version, c.versionSet = version, true
		return nil
	}
}

// WithPaths sets which ways Start tries, in order, when no hosts are given: PathDocker,
// PathNative.
func WithPaths(paths ...string) Option {
	return func(c *config) error {
		var out []string
		for _, p := range paths {
			switch p = strings.TrimSpace(p); p {
			case PathDocker, PathNative:
				out = append(out, p)
			case "":
			default:
				return fmt.Errorf("harness: unknown path %q in %s (want %s, %s)", p, EnvPaths, PathDocker, PathNative)
			}
		}
		if len(out) == 0 {
			return fmt.Errorf("harness: no path to try (want %s, %s)", PathDocker, PathNative)
		}
		c.paths = out
		return nil
	}
}

// WithStartTimeout bounds how long Start waits for the node to become ready.
func WithStartTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("harness: start timeout %v is not positive", d)
		}
		c.startTimeout = d
		return nil
	}
}

// WithProgress receives one line per step while the node starts.
func WithProgress(f func(msg string)) Option {
	return func(c *config) error {
		if f != nil {
			c.progress = f
		}
		return nil
	}
}

// WithLogger sets the gocql logger of every session the node's Cluster makes (default:
// gocql's global logger, which writes to the standard log).
func WithLogger(l gocql.StdLogger) Option {
	return func(c *config) error {
		c.logger = l
		return nil
	}
}

// Start finds or starts a Cassandra and waits until it is ready: a gocql session answers
// and schema agreement holds. With hosts (option or CQLSAFE_CASSANDRA_HOSTS) it only
// connects to them. Otherwise it tries, in order (CQLSAFE_CASSANDRA_PATHS changes it):
//
//  1. docker: when a Docker daemon answers and the image is present or can be pulled,
//     a container through testcontainers-go;
//  2. native: Apache Cassandra fetched with Maven into the cache directory (version
//     pinned, checksums checked) and run as a child process on a loopback address with
//     a private data directory; it dies with this process (see nativeNode).
//
// The progress callback says which one it used. When none works the error is an
// *UnavailableError listing each path, why it failed and what to do. The returned node
// must be closed; Close is safe on a nil or partly started node, so register it before
// checking the error.
func Start(ctx context.Context, opts ...Option) (*Node, error) {
	c, err := defaults()
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.startTimeout)
	defer cancel()

	n := &Node{logger: c.logger}
	if len(c.hosts) > 0 {
		n.hosts = c.hosts
		n.source = "hosts " + strings.Join(c.hosts, ",")
		c.progress("using " + n.source)
		if len(c.hosts) == 1 {
			// One contact point: connect only to it, whatever address the node announces
			// (a port-mapped container, docker compose on a laptop).
			if tr, err := ConnectOnly(c.hosts[0]); err == nil {
				n.translator = tr
			}
		}
		if cmd := strings.Fields(os.Getenv(EnvNodetool)); len(cmd) > 0 {
			n.nodetool = cmd
		}
		// Named hosts are the user's: when none of them even accepts TCP, say so now
		// rather than wait out the start timeout meant for a node the harness starts.
		up, err := Probe(ctx, n.hosts, nil)
		if err != nil {
			return n, fmt.Errorf("%w: %s: %w", ErrUnavailable, n.source, err)
		}
		n.hosts = up // a silent host would only hold up every session's first connect
		c.progress("waiting for CQL and schema agreement on " + strings.Join(n.hosts, ","))
		if err := n.waitReady(ctx); err != nil {
			return n, fmt.Errorf("%w: %s: %v", ErrUnavailable, n.source, err)
		}
		c.progress(fmt.Sprintf("Cassandra %s ready (%s)", n.version, n.source))
		return n, nil
	}
	failed := &UnavailableError{Tried: []*PathError{{Path: EnvHosts, Reason: "not set",
		Fix: "set it to host:port of a running Cassandra to use that one"}}}
	for _, path := range c.paths {
		if ctx.Err() != nil {
			failed.Tried = append(failed.Tried, pathErr(path, "not tried: "+ctx.Err().Error(), "raise the start timeout"))
			continue
		}
		c.progress("trying " + path)
		err := n.startPath(ctx, c, path)
		if err == nil {
			c.progress("waiting for CQL and schema agreement on " + strings.Join(n.hosts, ","))
			if err = n.waitReady(ctx); err == nil {
				c.progress(fmt.Sprintf("Cassandra %s ready (%s)", n.version, n.source))
				return n, nil
			}
			err = pathErr(path, n.source+": "+err.Error(), "see the progress lines above")
		}
		pe, ok := err.(*PathError)
		if !ok {
			pe = pathErr(path, err.Error(), "see the progress lines above")
		}
		c.progress(pe.Error() + "; trying the next way")
		failed.Tried = append(failed.Tried, pe)
		// Whatever half-started goes before the next path starts.
		cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
		_ = n.Close(cctx)
		ccancel()
		n = &Node{logger: c.logger}
	}
	return n, failed
}

func (n *Node) startPath(ctx context.Context, c config, path string) error {
	switch path {
	case PathDocker:
		img, err := pickImage(ctx, c)
		if err != nil {
			return err
		}
		c.image = img
		if err := n.startContainer(ctx, c); err != nil {
			return pathErr(PathDocker, "starting "+img+": "+err.Error(), "check Docker, or let the native node run")
		}
		return nil
	case PathNative:
		if err := n.startNative(ctx, c); err != nil {
			return err
		}
		n.hosts = []string{n.native.hostPort}
		n.translator, _ = ConnectOnly(n.native.hostPort)
		n.nodetool = n.native.nodetool
		n.source = fmt.Sprintf("native node %s, Cassandra %s from Maven Central", n.native.hostPort, c.version)
		return nil
	}
	return fmt.Errorf("harness: unknown path %q", path)
}

// Close stops the container or native node the harness started and removes its data. It
// never stops an external cluster and is safe on a nil node.
func (n *Node) Close(ctx context.Context) error {
	if n == nil {
		return nil
	}
	if n.native != nil {
		err := n.native.close()
		n.native = nil
		return err
	}
	if n.container == nil {
		return nil
	}
	return n.container.Terminate(ctx)
}

// Hosts returns the contact points, host:port.
func (n *Node) Hosts() []string { return append([]string(nil), n.hosts...) }

// Version is the release_version the node reported.
func (n *Node) Version() string { return n.version }

// Source says where the node came from, for logs.
func (n *Node) Source() string { return n.source }

// Cluster returns a new gocql cluster config for the node with the keyspace set (may be
// empty). Callers may change it before creating a session.
func (n *Node) Cluster(keyspace string) *gocql.ClusterConfig {
	cl := gocql.NewCluster(n.hosts...)
	cl.Keyspace = keyspace
	cl.ProtoVersion = 4
	cl.Timeout = 15 * time.Second
	cl.ConnectTimeout = 15 * time.Second
	cl.Consistency = gocql.Quorum
	cl.NumConns = 1
	cl.Logger = n.logger
	if n.translator != nil {
		cl.AddressTranslator = n.translator
		// The node announces its container address; only the published port is reachable.
		cl.DisableInitialHostLookup = true
	}
	return cl
}

// Session opens a session on the node, optionally bound to a keyspace.
func (n *Node) Session(ctx context.Context, keyspace string) (*gocql.Session, error) {
	if n == nil {
		return nil, ErrUnavailable
	}
	s, err := n.Cluster(keyspace).CreateSession()
	if err != nil {
		return nil, fmt.Errorf("harness: connect to %s: %w", strings.Join(n.hosts, ","), err)
	}
	return s, ctx.Err()
}

func (n *Node) waitReady(ctx context.Context) error {
	var last error
	for {
		if err := n.checkReady(ctx); err == nil {
			return nil
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready: %v (last error: %v)", ctx.Err(), last)
		case <-time.After(time.Second):
		}
	}
}

func (n *Node) checkReady(ctx context.Context) error {
	cl := n.Cluster("")
	cl.Timeout = 5 * time.Second
	cl.ConnectTimeout = 5 * time.Second
	s, err := CreateSession(ctx, cl)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Query(`SELECT release_version FROM system.local`).WithContext(ctx).Scan(&n.version); err != nil {
		return err
	}
	return s.AwaitSchemaAgreement(ctx)
}

// ConnectOnly returns an address translator that sends every connection to addr
// (host:port), whatever address the cluster announces: for a port-mapped container, a
// node behind NAT, or a fault proxy. Use it with a single node and
// DisableInitialHostLookup.
func ConnectOnly(addr string) (gocql.AddressTranslator, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, err
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return nil, fmt.Errorf("resolve %s: %v", host, err)
	}
	ip := ips[0]
	return gocql.AddressTranslatorFunc(func(net.IP, int) (net.IP, int) { return ip, port }), nil
}

// ClusterVia returns a cluster config like Cluster, but every connection goes to addr
// (host:port) — a fault-injection proxy in front of the node. Only for single-node use.
func (n *Node) ClusterVia(addr, keyspace string) (*gocql.ClusterConfig, error) {
	tr, err := ConnectOnly(addr)
	if err != nil {
		return nil, fmt.Errorf("harness: proxy address %q: %w", addr, err)
	}
	cl := n.Cluster(keyspace)
	cl.Hosts = []string{addr}
	cl.DisableInitialHostLookup = true
	cl.AddressTranslator = tr
	return cl, nil
}
