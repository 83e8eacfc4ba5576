package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Cluster is a multi-node Cassandra cluster run natively on loopback addresses the way
// ccm does (one address, data directory and JMX port per node; every node a seed; fixed
// tokens), through scripts/native-node.sh. It is for fault-injection suites: nodes can
// be killed, stopped, restarted, paused and resumed.
type Cluster struct {
	script string
	nodes  []clusterNode
	env    []string
}

type clusterNode struct {
	name, addr string
	jmx        int
	token      string
	dc         string // "": the script's default snitch (SimpleSnitch)
}

// ClusterAddresses are the loopback addresses StartNativeCluster uses, node i at index i.
var clusterAddressBase = 11 // 127.0.0.11, .12, …: clear of a single node on 127.0.0.1

// dcAddressBase is where StartNativeClusterDCs's nodes start: 127.0.0.31, .32, …, clear
// of StartNativeCluster's.
const dcAddressBase = 31

// StartNativeCluster starts n nodes (1–9) with scripts/native-node.sh (script is its
// path) on 127.0.0.11, 127.0.0.12, …, one after the other, each with heap heapMB, and
// waits until every node answers CQL. Data lives under the script's cache directory, in
// node directories named prefix1, prefix2, …; they are wiped first.
func StartNativeCluster(ctx context.Context, script, prefix string, n, heapMB int) (*Cluster, error) {
	if n < 1 || n > 9 {
		return nil, fmt.Errorf("harness: cluster of %d nodes", n)
	}
	return startCluster(ctx, script, prefix, clusterAddressBase, make([]string, n), heapMB)
}

// StartNativeClusterDCs is StartNativeCluster for nodes in data centres: node i is in
// data centre dcs[i] (GossipingPropertyFileSnitch, rack rack1), on 127.0.0.31, .32, ….
func StartNativeClusterDCs(ctx context.Context, script, prefix string, dcs []string, heapMB int) (*Cluster, error) {
	if len(dcs) < 1 || len(dcs) > 9 {
		return nil, fmt.Errorf("harness: cluster of %d nodes", len(dcs))
	}
	for _, dc := range dcs {
		if dc == "" {
			return nil, errors.New("harness: a node without a data centre")
		}
	}
	return startCluster(ctx, script, prefix, dcAddressBase, dcs, heapMB)
}

func startCluster(ctx context.Context, script, prefix string, base int, dcs []string, heapMB int) (*Cluster, error) {
	n := len(dcs)
	c := &Cluster{script: script}
	var seeds []string
	for i := 0; i < n; i++ {
		addr := fmt.Sprintf("127.0.0.%d", base+i)
		seeds = append(seeds, addr)
		c.nodes = append(c.nodes, clusterNode{name: fmt.Sprintf("%s%d", prefix, i+1), addr: addr, jmx: 7299 + 10*i, token: evenToken(i, n), dc: dcs[i]})
	}
	c.env = []string{
		"CQLSAFE_NODE_SEEDS=" + strings.Join(seeds, ","),
		fmt.Sprintf("MAX_HEAP_SIZE=%dM", heapMB), fmt.Sprintf("HEAP_NEWSIZE=%dM", heapMB/4),
	}
	for i := range c.nodes {
		if _, err := c.run(ctx, i, "wipe"); err != nil {
			return c, err
		}
	}
	for i := range c.nodes {
		if err := c.Start(ctx, i); err != nil {
			return c, err
		}
	}
	return c, nil
}

// evenToken spreads n single tokens evenly over the Murmur3 ring.
func evenToken(i, n int) string {
	step := new(big.Int).Div(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(int64(n)))
	t := new(big.Int).Add(big.NewInt(math.MinInt64), new(big.Int).Mul(step, big.NewInt(int64(i))))
	return t.String()
}

func (c *Cluster) run(ctx context.Context, i int, args ...string) (string, error) {
	nd := c.nodes[i]
	cmd := exec.CommandContext(ctx, c.script, args...)
	cmd.Env = append(append(os.Environ(), c.env...),
		"CQLSAFE_NODE_NAME="+nd.name, "CQLSAFE_NODE_ADDRESS="+nd.addr, "CQLSAFE_NODE_PORT=9042",
		"CQLSAFE_NODE_JMX_PORT="+strconv.Itoa(nd.jmx), "CQLSAFE_NODE_TOKEN="+nd.token)
	if nd.dc != "" { // read by cassandra-configure
		cmd.Env = append(cmd.Env, "CASSANDRA_ENDPOINT_SNITCH=GossipingPropertyFileSnitch", "CASSANDRA_DC="+nd.dc, "CASSANDRA_RACK=rack1")
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("harness: %s %s on %s: %w: %s", c.script, strings.Join(args, " "), nd.name, err, lastLines(errb.String(), 15))
	}
	return strings.TrimSpace(out.String()), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Hosts returns host:port of every node.
func (c *Cluster) Hosts() []string {
	out := make([]string, len(c.nodes))
	for i, nd := range c.nodes {
		out[i] = nd.addr + ":9042"
	}
	return out
}

// Addr returns node i's address.
func (c *Cluster) Addr(i int) string { return c.nodes[i].addr }

// Start starts node i (again) and waits until it answers CQL.
func (c *Cluster) Start(ctx context.Context, i int) error {
	_, err := c.run(ctx, i, "start")
	return err
}

// Stop stops node i gracefully.
func (c *Cluster) Stop(ctx context.Context, i int) error {
	_, err := c.run(ctx, i, "stop")
	return err
}

// Kill kills node i at once (SIGKILL): no flush, no goodbye to the other nodes.
func (c *Cluster) Kill(ctx context.Context, i int) error { return c.signal(ctx, i, syscall.SIGKILL) }

// Pause freezes node i (SIGSTOP): connections stay open and nothing answers, as with a
// hung process or a long GC pause.
func (c *Cluster) Pause(ctx context.Context, i int) error { return c.signal(ctx, i, syscall.SIGSTOP) }

// Resume thaws a paused node (SIGCONT).
func (c *Cluster) Resume(ctx context.Context, i int) error { return c.signal(ctx, i, syscall.SIGCONT) }

func (c *Cluster) signal(ctx context.Context, i int, sig syscall.Signal) error {
	out, err := c.run(ctx, i, "pid")
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(out)
	if err != nil {
		return fmt.Errorf("harness: pid of %s: %q", c.nodes[i].name, out)
	}
	// The launcher execs java, so the pid is the JVM's.
	return syscall.Kill(pid, sig)
}

// Nodetool runs nodetool against node i.
func (c *Cluster) Nodetool(ctx context.Context, i int, args ...string) (string, error) {
	return c.run(ctx, i, append([]string{"nodetool"}, args...)...)
}

// Close stops every node and deletes their data.
func (c *Cluster) Close(ctx context.Context) error {
	if c == nil {
		return nil
	}
	var first error
	for i := range c.nodes {
		_ = c.signal(ctx, i, syscall.SIGCONT)
		if _, err := c.run(ctx, i, "wipe"); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// WaitUp waits until every node reports all nodes UN (up, normal) in nodetool status.
func (c *Cluster) WaitUp(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ok := true
		for i := range c.nodes {
			out, err := c.Nodetool(ctx, i, "status")
			if err != nil || strings.Count(out, "\nUN ") != len(c.nodes) {
				ok = false
				break
			}
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("harness: cluster not all up and normal after %v", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
