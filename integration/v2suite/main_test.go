// Package v2suite runs cqlsafe's gocqlv2 module — the packages for the Apache Cassandra
// Go driver v2 — against a real Cassandra, with the fault proxy in front of it: the same
// faults and the same checks of what Cassandra holds as the gocql v1.7 suites.
package v2suite

import (
	"os"
	"testing"

	"github.com/cqlsafe/cqlsafe/integration/harness"
)

// node is the Cassandra every test in this package shares; each test gets its own
// keyspace (created, and read back, through the harness's gocql v1.7 session: what
// Cassandra holds does not depend on the driver that reads it).
var node *harness.Node

func TestMain(m *testing.M) { os.Exit(harness.Main(m, &node)) }
