// The application CI's install check builds (as it is for gocql v1.7 and the fork; with
// the gocqlv2 import paths for the Apache driver v2) in a fresh module from the lines in
// README.md's Install section: one Policy.Exec and one overwrite.Row against the
// Cassandra at CQLSAFE_CASSANDRA_HOSTS, keyspace CQLSAFE_KEYSPACE, table install_kv
// (id int PRIMARY KEY, v text, n text). It prints "row N" (N: the overwrite's
// timestamp); the check reads Cassandra to see what it holds.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ks := os.Getenv("CQLSAFE_KEYSPACE")
	cluster := gocql.NewCluster(strings.Split(os.Getenv("CQLSAFE_CASSANDRA_HOSTS"), ",")...)
	cluster.Keyspace = ks
	cluster.Timeout = 10 * time.Second
	session, err := cluster.CreateSession()
	if err != nil {
		return err
	}
	defer session.Close()
	policy := retry.NewPolicy(retry.WithSchema(retry.SessionSchema(session)))
	if err := policy.Exec(ctx, session.Query(`INSERT INTO install_kv (id, v, n) VALUES (?, ?, ?)`, 1, "exec", "n")); err != nil {
		return err
	}
	tbl, err := overwrite.Describe(ctx, session, ks, "install_kv")
	if err != nil {
		return err
	}
	res, err := overwrite.Row(ctx, session, tbl, map[string]any{"id": 2, "v": "row"})
	if err != nil {
		return err
	}
	fmt.Printf("row %d\n", res.Timestamp)
	return nil
}
