package oracle

import (
	"os"
	"testing"

	"github.com/cqlsafe/cqlsafe/integration/harness"
)

// node is the Cassandra every test in this package shares; each test gets its own keyspace.
var node *harness.Node

func TestMain(m *testing.M) { os.Exit(harness.Main(m, &node)) }
