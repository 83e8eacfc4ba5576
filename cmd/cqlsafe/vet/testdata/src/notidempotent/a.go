package notidempotent

import (
	"context"

	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/gocql/gocql"
)

const insertUnique = "INSERT INTO users (id, name) VALUES (?, ?) IF NOT EXISTS"

func retrying(s *gocql.Session, id, name string) error {
	rp := &gocql.SimpleRetryPolicy{NumRetries: 3}
	if err := s.Query(insertUnique, id, name).RetryPolicy(rp).Exec(); err != nil { // want `not-idempotent: "INSERT INTO users .*" is not idempotent \(lightweight transaction \(IF NOT EXISTS\)\) and is executed with a retrying policy \(gocql.SimpleRetryPolicy\)`
		return err
	}
	q := s.Query("UPDATE counts SET n = n + 1 WHERE id = ?", id)
	q = q.RetryPolicy(&gocql.ExponentialBackoffRetryPolicy{NumRetries: 5})
	return q.Exec() // want `not-idempotent: .*counter update`
}

func markedIdempotent(s *gocql.Session, id string) error {
	return s.Query("UPDATE t SET l = l + ['x'] WHERE id = ?", id).Idempotent(true).Exec() // want `not-idempotent: .*is marked Idempotent\(true\)`
}

func casWithRetry(s *gocql.Session, id string) (bool, error) {
	m := map[string]interface{}{}
	return s.Query("UPDATE users SET name = 'x' WHERE id = ? IF name = 'y'", id).
		RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 2}).
		MapScanCAS(m) // want `not-idempotent: .*lightweight transaction`
}

func counterBatch(s *gocql.Session) error {
	b := s.NewBatch(gocql.CounterBatch)
	b.Query("UPDATE counts SET n = n + 1 WHERE id = 'a'")
	b.RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 1})
	return s.ExecuteBatch(b) // want `not-idempotent: this batch \(.*\) is not idempotent \(counter update .*; COUNTER batch\)`
}

// Negative cases.

func noRetry(s *gocql.Session, id, name string) error {
	// gocql's default is no retries.
	return s.Query(insertUnique, id, name).Exec()
}

func zeroRetries(s *gocql.Session, id, name string) error {
	return s.Query(insertUnique, id, name).RetryPolicy(&gocql.SimpleRetryPolicy{}).Exec()
}

func cqlsafePolicy(ctx context.Context, s *gocql.Session, p *retry.Policy, id, name string) error {
	if err := s.Query(insertUnique, id, name).RetryPolicy(p).Exec(); err != nil {
		return err
	}
	return p.Exec(ctx, s.Query("UPDATE counts SET n = n + 1 WHERE id = ?", id))
}

func idempotentRetried(s *gocql.Session, id string) error {
	return s.Query("UPDATE users SET name = ? WHERE id = ?", "n", id).
		WithTimestamp(1).
		RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 3}).Exec()
}

func notConstant(s *gocql.Session, cql string) error {
	return s.Query(cql).Idempotent(true).Exec()
}

func read(s *gocql.Session) error {
	var n int
	return s.Query("SELECT n FROM counts WHERE id = 'a'").Idempotent(true).Scan(&n)
}
