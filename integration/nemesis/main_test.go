package nemesis

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/integration/harness"
)

var (
	cluster *harness.Cluster
	binary  string // the example service, built once
	workDir string // instance logs and outboxes; kept when a test fails
)

const nodes = 3

func TestMain(m *testing.M) {
	if os.Getenv("CQLSAFE_FAULTS") != "1" && os.Getenv("CQLSAFE_NEMESIS") != "1" {
		fmt.Fprintln(os.Stderr, "nemesis: runs only with CQLSAFE_FAULTS=1 or CQLSAFE_NEMESIS=1 (three native nodes); its tests will skip")
		os.Exit(m.Run())
	}
	os.Exit(setUp(m))
}

func setUp(m *testing.M) int {
	var err error
	if workDir, err = os.MkdirTemp("", "cqlsafe-nemesis-"); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL nemesis:", err)
		return 1
	}
	// The example service builds while the cluster starts.
	binary = filepath.Join(workDir, "orders")
	built := make(chan error, 1)
	go func() {
		out, err := exec.Command("go", "build", "-o", binary, "github.com/cqlsafe/cqlsafe/examples/orders").CombinedOutput()
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, out)
		}
		built <- err
	}()
	script, _ := filepath.Abs("../../scripts/native-node.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	start := time.Now()
	cluster, err = harness.StartNativeCluster(ctx, script, "nemesis", nodes, 768)
	if err == nil {
		err = cluster.WaitUp(ctx, 3*time.Minute)
	}
	cancel()
	defer cluster.Close(context.Background())
	buildErr := <-built
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL nemesis: cluster: %v\n", err)
		return 1
	}
	if buildErr != nil {
		fmt.Fprintf(os.Stderr, "FAIL nemesis: build the example service: %v\n", buildErr)
		return 1
	}
	fmt.Fprintf(os.Stderr, "nemesis: %d-node cluster up in %.0fs; logs in %s\n", nodes, time.Since(start).Seconds(), workDir)
	code := m.Run()
	if code == 0 {
		os.RemoveAll(workDir)
	}
	return code
}

// longMode reports whether the nemesis was asked for by name (CQLSAFE_NEMESIS=1): every
// configuration runs. Under CQLSAFE_FAULTS=1 alone (CI) the short mode runs.
func longMode() bool { return os.Getenv("CQLSAFE_NEMESIS") == "1" }

func requireCluster(t *testing.T) {
	t.Helper()
	if cluster == nil {
		t.Skip("nemesis: set CQLSAFE_FAULTS=1 or CQLSAFE_NEMESIS=1 to run it")
	}
}

// envDuration reads a duration from the environment (def when unset).
func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: not a positive duration", name, v)
	}
	return d
}

// envSeed reads CQLSAFE_NEMESIS_SEED (def when unset).
func envSeed(t *testing.T, def uint64) uint64 {
	t.Helper()
	v := os.Getenv("CQLSAFE_NEMESIS_SEED")
	if v == "" {
		return def
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("CQLSAFE_NEMESIS_SEED=%q: %v", v, err)
	}
	return n
}
