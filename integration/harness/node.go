package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gocql/gocql"
	tccassandra "github.com/testcontainers/testcontainers-go/modules/cassandra"
)

// ErrUnavailable is returned by Start when no Cassandra could be found or started.
var ErrUnavailable = errors.New("harness: no Cassandra available")

// Node is a running Cassandra: a container the harness started, or a cluster named by
// CQLSAFE_CASSANDRA_HOSTS. A nil *Node is valid: its test helpers skip (or fail, when
// Cassandra is required).
type Node struct {
	hosts      []string
	translator gocql.AddressTranslator
	container  *tccassandra.CassandraContainer
	nodetool   []string
	version    string
	source     string
	startErr   error
}

// Option configures Start.
type Option func(*config) error

type config struct {
	hosts        []string
	image        string
	startTimeout time.Duration
	progress     func(string)
}

// defaults: hosts from CQLSAFE_CASSANDRA_HOSTS, image from CQLSAFE_CASSANDRA_IMAGE or
// DefaultImage, 5 minutes to become ready, progress discarded.
func defaults() (config, error) {
	c := config{image: DefaultImage, startTimeout: 5 * time.Minute, progress: func(string) {}}
	if img := strings.TrimSpace(os.Getenv(EnvImage)); img != "" {
		c.image = img
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

// WithHosts uses a running cluster instead of starting a container.
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
		c.image = image
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

// Start finds or starts a Cassandra and waits until it is ready: a gocql session answers
// and schema agreement holds. With hosts (option or CQLSAFE_CASSANDRA_HOSTS) it only
// connects; otherwise it starts the image through testcontainers-go. The returned
// node must be closed; Close is safe on a nil or partly started node, so register it
// before checking the error.
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

	n := &Node{}
	if len(c.hosts) > 0 {
		n.hosts = c.hosts
		n.source = "hosts " + strings.Join(c.hosts, ",")
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
	} else if err := n.startContainer(ctx, c); err != nil {
		return n, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	c.progress("waiting for CQL and schema agreement on " + strings.Join(n.hosts, ","))
	if err := n.waitReady(ctx); err != nil {
		return n, fmt.Errorf("%w: %s: %v", ErrUnavailable, n.source, err)
	}
	c.progress(fmt.Sprintf("Cassandra %s ready (%s)", n.version, n.source))
	return n, nil
}

// Close stops the container the harness started. It never stops an external cluster and
// is safe on a nil node.
func (n *Node) Close(ctx context.Context) error {
	if n == nil || n.container == nil {
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
	s, err := cl.CreateSession()
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
