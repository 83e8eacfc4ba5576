package harness

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// Main starts one node for a test package, stores it in *node, runs the tests and stops
// the node. Use it from TestMain: os.Exit(harness.Main(m, &node)).
//
// When no Cassandra can be had, tests that ask for one skip with a message saying how to
// get one; with CQLSAFE_REQUIRE_CASSANDRA=1 Main fails the package instead, before any
// test runs.
func Main(m *testing.M, node **Node) int {
	return mainWithTimeout(m, node, 5*time.Minute)
}

func mainWithTimeout(m *testing.M, node **Node, timeout time.Duration) int {
	start := time.Now()
	n, err := Start(context.Background(), WithStartTimeout(timeout), WithProgress(func(msg string) {
		fmt.Fprintf(os.Stderr, "harness: %s (%.1fs)\n", msg, time.Since(start).Seconds())
	}))
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := n.Close(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "harness: stop node: %v\n", err)
		}
	}()
	if err != nil {
		if Required() {
			fmt.Fprintf(os.Stderr, "FAIL harness: %s=1 but %v\n", EnvRequire, err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "harness: %v; tests that need Cassandra will skip\n", err)
		if n == nil {
			n = &Node{}
		}
		n.startErr = err
	}
	*node = n
	return m.Run()
}
