package suite

import (
	"os"
	"strconv"
	"testing"

	"github.com/cqlsafe/cqlsafe/integration/harness"
)

// node is the Cassandra every test in this package shares; each test gets its own keyspace.
var node *harness.Node

func TestMain(m *testing.M) { os.Exit(harness.Main(m, &node)) }

func envInt(name string) int {
	v, _ := strconv.Atoi(os.Getenv(name))
	return v
}
