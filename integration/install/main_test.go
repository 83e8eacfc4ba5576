package install

import (
	"os"
	"testing"

	"github.com/cqlsafe/cqlsafe/integration/harness"
)

// node is the Cassandra the installed applications write to.
var node *harness.Node

func TestMain(m *testing.M) { os.Exit(harness.Main(m, &node)) }
