// Package v2driver uses the Apache Cassandra Go driver v2: the rules read it as gocql.
package v2driver

import (
	"context"

	"github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
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

// withCqlsafe: cqlsafe's retry package for the v2 driver is read as the v1.7 one: its
// Policy set by hand never re-sends an unpinned write, and Do's function must not mint
// ids or times.
func withCqlsafe(ctx context.Context, s *gocql.Session, p *retry.Policy) error {
	if err := s.Query("INSERT INTO t (id, v) VALUES (?, ?)", 1, "x").RetryPolicy(p).Exec(); err != nil {
		return err
	}
	return retry.Do(ctx, func(ctx context.Context) error {
		id := gocql.TimeUUID() // want `server-nondeterminism: gocql.TimeUUID\(\) inside the function given to retry.Do`
		return retry.Exec(ctx, s.Query("INSERT INTO events (id) VALUES (?)", id))
	})
}
