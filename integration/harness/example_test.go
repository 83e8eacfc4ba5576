package harness_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cqlsafe/cqlsafe/integration/harness"
)

// Start a Cassandra (CQLSAFE_CASSANDRA_HOSTS, a container, or a native node)
// outside a test, e.g. in a tool. Close is nil-safe, so defer it before checking err.
func ExampleStart() {
	if !harness.Required() {
		return // needs Docker or a running Cassandra
	}
	ctx := context.Background()
	node, err := harness.Start(ctx, harness.WithProgress(func(msg string) { log.Println(msg) }))
	//lint:ignore SA5001 Close is nil-safe: cleanup is registered before the error check, as in testcontainers-go
	defer node.Close(ctx)
	if err != nil {
		log.Fatal(err)
	}
	s, err := node.Session(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	fmt.Println(node.Version() != "")
}
