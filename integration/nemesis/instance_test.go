package nemesis

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/examples/orders/shop"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
)

// env is one run's keyspace, proxies and service instances.
type env struct {
	t       *testing.T
	ks      string
	direct  *gocql.Session // straight to the nodes, QUORUM: the checker's reads
	proxies []*faultproxy.Proxy
	insts   []*instance
}

// instanceConfig is how the instances of a run are started.
type instanceConfig struct {
	offsets        []time.Duration // one per instance: its clock's offset
	maxClockOffset time.Duration   // the guard's bound (WithMaxClockOffset)
	naive          bool            // the control: writes re-sent on any error (NaiveRetries)
}

// newEnv creates a keyspace with RF=3, the service's schema, and a fault proxy in front
// of every node; startInstances then runs the service.
func newEnv(t *testing.T) *env {
	t.Helper()
	requireCluster(t)
	e := &env{t: t, ks: harness.KeyspaceName(t.Name())}
	cl := gocql.NewCluster(cluster.Hosts()...)
	cl.ProtoVersion = 4
	cl.Consistency = gocql.Quorum
	cl.Timeout = 20 * time.Second
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := shop.CreateSchema(context.Background(), s, e.ks, nodes); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Query("DROP KEYSPACE IF EXISTS " + e.ks).Exec() })
	e.direct = s
	for i := 0; i < nodes; i++ {
		// One loopback address per proxy (127.0.0.21, .22, …): gocql drops hosts from its
		// query plan by IP, so proxies sharing one IP would all leave it when one node
		// goes down (see faultproxy.StartOn).
		px, err := faultproxy.StartOn(fmt.Sprintf("127.0.0.%d", 21+i), cluster.Addr(i)+":9042")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { px.Close() })
		e.proxies = append(e.proxies, px)
	}
	return e
}

// startInstances stops the instances running (if any) and starts one per offset of
// cfg, each with its own outbox, all through the proxies.
func (e *env) startInstances(t *testing.T, name string, cfg instanceConfig) {
	t.Helper()
	for _, in := range e.insts {
		in.stop()
	}
	e.insts = nil
	var addrMap []string
	for i, px := range e.proxies {
		addrMap = append(addrMap, cluster.Addr(i)+"="+px.Addr())
	}
	dir := filepath.Join(workDir, e.ks, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, off := range cfg.offsets {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		in := &instance{idx: i, addr: fmt.Sprintf("127.0.0.1:%d", port), log: filepath.Join(dir, fmt.Sprintf("instance%d.log", i)),
			outbox: filepath.Join(dir, fmt.Sprintf("instance%d.outbox", i))}
		in.args = []string{"--hosts", e.proxies[0].Addr(), "--address-map", strings.Join(addrMap, ","),
			"--keyspace", e.ks, "--replication-factor", "3", "--listen", in.addr, "--outbox", in.outbox,
			"--timeout", "1s", "--replay-every", "2s", "--measure-clock-every", "3s",
			"--max-clock-offset", cfg.maxClockOffset.String(), "--clock-offset", off.String()}
		if cfg.naive {
			in.args = append(in.args, "--naive-retries")
		}
		e.insts = append(e.insts, in)
		t.Cleanup(in.kill)
	}
	errs := make(chan error, len(e.insts))
	for _, in := range e.insts {
		go func() { errs <- in.start(context.Background()) }()
	}
	for range e.insts {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// heal lifts every proxy fault.
func (e *env) heal() {
	for _, px := range e.proxies {
		px.SetRule(nil)
		px.SetLatency(0)
	}
}

// instance is one process of the example service.
type instance struct {
	idx    int
	addr   string
	log    string
	outbox string
	args   []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// start runs the instance and waits until it serves (it replays its outbox first).
func (in *instance) start(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.cmd != nil {
		return nil
	}
	f, err := os.OpenFile(in.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(binary, in.args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); f.Close(); close(exited) }()
	in.cmd, in.exited = cmd, exited
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get("http://" + in.addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-exited:
			in.cmd = nil
			return fmt.Errorf("instance %d exited at start (log %s)", in.idx, in.log)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("instance %d not serving after 90s (log %s)", in.idx, in.log)
		}
	}
}

// kill SIGKILLs the instance: requests in flight die with it, its outbox stays on disk.
func (in *instance) kill() { in.signal(syscall.SIGKILL) }

// stop SIGTERMs the instance: it finishes its requests and replays its outbox once more.
func (in *instance) stop() { in.signal(syscall.SIGTERM) }

func (in *instance) signal(sig syscall.Signal) {
	in.mu.Lock()
	cmd, exited := in.cmd, in.exited
	in.cmd = nil
	in.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}
