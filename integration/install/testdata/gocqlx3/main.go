// The application of a gocqlx v3 user (on the ScyllaDB fork, as gocqlx v3 requires) that
// CI's install check builds from README.md's Install lines: the table's gocqlx model
// describes it for overwrite (DescribeGocqlx), one Policy.Exec and one overwrite.Row
// against the Cassandra at CQLSAFE_CASSANDRA_HOSTS, keyspace CQLSAFE_KEYSPACE, table
// install_kv (id int PRIMARY KEY, v text, n text). It prints "row N".
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
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
	hosts := strings.Split(os.Getenv("CQLSAFE_CASSANDRA_HOSTS"), ",")
	cluster := gocql.NewCluster(hosts...)
	cluster.Keyspace = ks
	if ip, port, ok := oneAddress(hosts); ok {
		// One address, perhaps a container's published port: the node announces its
		// container address, which some drivers dial (the fork v1.18); use the given one.
		cluster.AddressTranslator = gocql.AddressTranslatorFunc(func(net.IP, int) (net.IP, int) { return ip, port })
		cluster.DisableInitialHostLookup = true
	}
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

// oneAddress is the IPv4 address and port of hosts when it names one host.
func oneAddress(hosts []string) (net.IP, int, bool) {
	if len(hosts) != 1 {
		return nil, 0, false
	}
	h, p, err := net.SplitHostPort(hosts[0])
	if err != nil {
		return nil, 0, false
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return nil, 0, false
	}
	ips, err := net.LookupIP(h)
	if err != nil {
		return nil, 0, false
	}
	for _, ip := range ips {
		if ip.To4() != nil {
			return ip, port, true
		}
	}
	return nil, 0, false
}
