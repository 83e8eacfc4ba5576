package retry

import (
	"fmt"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// TestRetryClassifyConnectionTornDown: the errors the v2 driver hands every request in
// flight on a connection it closes — a failed heartbeat, a response
// frame it cannot read — may follow a written request: ClassConnection, not fatal.
func TestRetryClassifyConnectionTornDown(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("gocql: heartbeat failed"),
		fmt.Errorf("gocql: unsupported protocol response version: %d", 15),
		gocql.NewErrProtocol("Unknown type in response to execute query (%T): %s", 1, "x"),
	} {
		if c := ClassifyError(err); c != ClassConnection || !c.MayHaveApplied() {
			t.Errorf("ClassifyError(%v) = %v, want connection (may have applied)", err, c)
		}
	}
	if c := ClassifyError(fmt.Errorf("can not marshal string into int")); c != ClassFatal {
		t.Errorf("a marshal error: %v, want fatal (nothing sent)", c)
	}
}
