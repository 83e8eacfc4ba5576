package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"

	tcexec "github.com/testcontainers/testcontainers-go/exec"
)

// ErrNoNodetool is returned when the node is an external cluster and CQLSAFE_NODETOOL
// does not say how to run nodetool against it.
var ErrNoNodetool = errors.New("harness: no way to run nodetool: set " + EnvNodetool + " (e.g. \"scripts/native-node.sh nodetool\")")

// Nodetool runs nodetool on the node: inside the container the harness started, or, for
// an external cluster, the command in CQLSAFE_NODETOOL followed by args.
func (n *Node) Nodetool(ctx context.Context, args ...string) (string, error) {
	if n == nil {
		return "", ErrUnavailable
	}
	if n.container != nil {
		code, r, err := n.container.Exec(ctx, append([]string{"nodetool"}, args...), tcexec.Multiplexed())
		if err != nil {
			return "", fmt.Errorf("harness: nodetool %s: %w", strings.Join(args, " "), err)
		}
		out, _ := io.ReadAll(r)
		if code != 0 {
			return string(out), fmt.Errorf("harness: nodetool %s: exit %d: %s", strings.Join(args, " "), code, strings.TrimSpace(string(out)))
		}
		return string(out), nil
	}
	if len(n.nodetool) == 0 {
		return "", ErrNoNodetool
	}
	cmd := exec.CommandContext(ctx, n.nodetool[0], append(n.nodetool[1:], args...)...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return buf.String(), fmt.Errorf("harness: nodetool %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(buf.String()))
	}
	return buf.String(), nil
}

// Flush writes the table's memtable to an SSTable (nodetool flush keyspace table).
func (n *Node) Flush(ctx context.Context, keyspace, table string) error {
	_, err := n.Nodetool(ctx, "flush", keyspace, table)
	return err
}

// MustFlush flushes keyspace.table for a test. When nodetool cannot be run (an external
// cluster without CQLSAFE_NODETOOL) the test is skipped with that reason — or fails when
// Cassandra is required.
func (n *Node) MustFlush(t testing.TB, keyspace, table string) {
	t.Helper()
	err := n.Flush(context.Background(), keyspace, table)
	if errors.Is(err, ErrNoNodetool) && !Required() {
		t.Skipf("%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
}
