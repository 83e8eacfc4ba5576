// Package dcs runs what needs two data centres — hedging under LOCAL_* consistency —
// on two native Cassandra nodes, one per data centre (GossipingPropertyFileSnitch, on
// 127.0.0.31 and .32). It runs only with CQLSAFE_FAULTS=1, like the three-node suite.
package dcs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/integration/harness"
)

var cluster *harness.Cluster

func TestMain(m *testing.M) {
	if os.Getenv("CQLSAFE_FAULTS") != "1" {
		fmt.Fprintln(os.Stderr, "dcs: the two-data-centre tests run only with CQLSAFE_FAULTS=1 (CI sets it); its tests will skip")
		os.Exit(m.Run())
	}
	script, _ := filepath.Abs("../../scripts/native-node.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	start := time.Now()
	var err error
	cluster, err = harness.StartNativeClusterDCs(ctx, script, "dc", []string{"dc1", "dc2"}, 512)
	if err == nil {
		err = cluster.WaitUp(ctx, 3*time.Minute)
	}
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL dcs: cluster: %v\n", err)
		cluster.Close(context.Background())
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "dcs: two nodes in two data centres up in %.0fs\n", time.Since(start).Seconds())
	code := m.Run()
	cluster.Close(context.Background())
	os.Exit(code)
}

func requireCluster(t *testing.T) {
	t.Helper()
	if cluster == nil {
		t.Skip("dcs: set CQLSAFE_FAULTS=1 to run the two-data-centre tests")
	}
}
