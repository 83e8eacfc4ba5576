// The application of a gocqlx v3 user (on the ScyllaDB fork, as gocqlx v3 requires) that
// CI's install check builds from README.md's Install lines: the table's gocqlx model
// describes it for overwrite (DescribeGocqlx), one Policy.Exec and one overwrite.Row
// against the Cassandra at CQLSAFE_CASSANDRA_HOSTS, keyspace CQLSAFE_KEYSPACE, table
// install_kv (id int PRIMARY KEY, v text, n text). It prints "row N".
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gocql/gocql"
	"github.com/scylladb/gocqlx/v3/table"

	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
)

// kv is the gocqlx model of install_kv, as schemagen writes one.
var kv = table.New(table.Metadata{
	Name:    "install_kv",
	Columns: []string{"id", "v", "n"},
	PartKey: []string{"id"},
})

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
	stmt, _ := kv.Insert()
	// The model's column order: id, v, n.
	if err := policy.Exec(ctx, session.Query(stmt, 1, "exec", "n")); err != nil {
		return err
	}
	tbl, err := overwrite.DescribeGocqlx(ctx, session, ks, kv.Metadata())
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
