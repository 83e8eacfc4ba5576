package cqlsafeotel_test

import (
	"os"
	"testing"

	"github.com/cqlsafe/cqlsafe/integration/harness"
)

// node is the Cassandra the tests of this package share; each test gets its own keyspace.
var node *harness.Node

func TestMain(m *testing.M) { os.Exit(harness.Main(m, &node)) }
