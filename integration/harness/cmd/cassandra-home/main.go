// Command cassandra-home prints the directory whose lib/ holds Apache Cassandra's jars
// for a version (default CQLSAFE_CASSANDRA_VERSION, else the harness's default),
// fetching them with Maven into the cache directory first when needed, with the same
// checks as the harness's native node. scripts/fetch-cassandra.sh wraps it.
//
//	go run github.com/cqlsafe/cqlsafe/integration/harness/cmd/cassandra-home [version]
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/cqlsafe/cqlsafe/integration/harness"
)

func main() {
	version := strings.TrimSpace(os.Getenv(harness.EnvVersion))
	if len(os.Args) > 1 {
		version = os.Args[1]
	}
	if version == "" {
		version = harness.DefaultVersion
	}
	home, err := harness.CassandraHome(context.Background(), version, func(msg string) { fmt.Fprintln(os.Stderr, msg) })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(home)
}
