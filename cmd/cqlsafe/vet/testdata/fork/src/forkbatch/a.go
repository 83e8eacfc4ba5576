// Package forkbatch fills batches on the ScyllaDB fork, whose Batch.Query returns the
// batch: its entries are a batch's, not queries of their own.
package forkbatch

import "github.com/gocql/gocql"

func counterLogged(s *gocql.Session) error {
	b := s.NewBatch(gocql.LoggedBatch)
	b.Query("UPDATE c SET n = n + 1 WHERE id = ?", 1) // want `list-assignment: counter update in a LOGGED batch`
	b.RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 3})
	return s.ExecuteBatch(b) // want `not-idempotent: this batch`
}
