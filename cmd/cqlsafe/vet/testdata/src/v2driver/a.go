// Package v2driver uses the Apache Cassandra Go driver v2: the rules read it as gocql.
package v2driver

import (
	"context"

	"github.com/apache/cassandra-gocql-driver/v2"
)

func counter(s *gocql.Session) error {
	return s.Query("UPDATE c SET n = n + 1 WHERE id = ?", 1).RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 3}).Exec() // want `not-idempotent: "UPDATE c SET n = n \+ 1 WHERE id = \?" is not idempotent \(counter update`
}

func unpinned(s *gocql.Session) error {
	return s.Query("INSERT INTO t (id, v) VALUES (?, ?)", 1, "x").RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 3}).Exec() // want `unpinned-timestamp`
}

func loggedCounter(s *gocql.Session) error {
	b := s.Batch(gocql.LoggedBatch)
	b.Query("UPDATE stats SET logins = logins + 1 WHERE id = ?", "a") // want `list-assignment: counter update in a LOGGED batch`
	return s.ExecuteBatch(b)
}

func nilValue(s *gocql.Session) error {
	return s.Query("INSERT INTO t (id, v) VALUES (?, ?)", 1, nil).Exec() // want `null-not-unset: nil bound to column "v"`
}

// unpinnedContext sends the write with v2's ExecContext: the same finding as Exec.
func unpinnedContext(ctx context.Context, s *gocql.Session) error {
	return s.Query("INSERT INTO t (id, v) VALUES (?, ?)", 1, "x").RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 3}).ExecContext(ctx) // want `unpinned-timestamp`
}
