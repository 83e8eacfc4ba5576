package mixeddrivers

import (
	v2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/gocql/gocql"
)

// A v2 ClusterConfig's retry policy retries v2 sessions' queries only.
func connectV2() (*v2.Session, error) {
	cl := v2.NewCluster("127.0.0.1")
	cl.RetryPolicy = &v2.SimpleRetryPolicy{NumRetries: 3}
	return cl.CreateSession()
}

func writeV2(s *v2.Session, id, name string) error {
	return s.Query("UPDATE users SET name = ? WHERE id = ?", name, id).Exec() // want `unpinned-timestamp: .* retried by gocql.SimpleRetryPolicy set as the ClusterConfig's RetryPolicy`
}

// Negative: a gocql v1.7 session in the same package keeps v1.7's default (no retries).
func writeV1(s *gocql.Session, id, name string) error {
	return s.Query("UPDATE users SET name = ? WHERE id = ?", name, id).Exec()
}
