// Package gocqlxexec runs statements through gocqlx's ExecStmt and ContextQuery, and
// builds their table names at run time, with a retrying cluster.
package gocqlxexec

import (
	"context"
	"fmt"

	"github.com/gocql/gocql"
	gocqlx "github.com/scylladb/gocqlx/v2"
)

func connect() (*gocql.Session, error) {
	cluster := gocql.NewCluster("127.0.0.1")
	cluster.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 3}
	return cluster.CreateSession()
}

func execStmt(s gocqlx.Session) error {
	return s.ExecStmt("UPDATE stats SET n = n + 1 WHERE id = 'a'") // want `not-idempotent: "UPDATE stats SET n = n \+ 1 WHERE id = 'a'" is not idempotent`
}

func sprintf(ctx context.Context, s gocqlx.Session, tbl string) error {
	return s.ContextQuery(ctx, fmt.Sprintf("UPDATE %s SET c = c + 1 WHERE k = ?", tbl), []string{"k"}).ExecRelease() // want `not-idempotent: "UPDATE \\"\{tbl\}\\" SET c = c \+ 1 WHERE k = \?" is not idempotent`
}

func concat(s *gocql.Session, ks, tbl string) error {
	return s.Query("UPDATE "+ks+"."+tbl+" SET c1 = c1 + ?, c2 = ? WHERE pk = ?", 1, 2, 3).Exec() // want `not-idempotent: "UPDATE \\"\{ks\}\\".\\"\{tbl\}\\" SET c1 = c1 \+ \?, c2 = \? WHERE pk = \?" is not idempotent`
}

// Negative: idempotent with the table unknown, pinned.
func pinned(s *gocql.Session, tbl string) error {
	return s.Query("DELETE FROM "+tbl+" WHERE id = ?", 1).WithTimestamp(1).Exec()
}

// Listed, not analysed: the unknown part is not an identifier.
func clause(s *gocql.Session, set string) error {
	return s.Query("UPDATE t SET "+set+" WHERE id = ?", 1).WithTimestamp(1).Exec()
}
