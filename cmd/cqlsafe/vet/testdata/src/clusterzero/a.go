// Package clusterzero sets one ClusterConfig's RetryPolicy to no retries.
package clusterzero

import "github.com/gocql/gocql"

func session() *gocql.Session {
	cluster := gocql.NewCluster("127.0.0.1")
	cluster.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 0}
	s, _ := cluster.CreateSession()
	return s
}

func write(s *gocql.Session, cql string) error {
	return s.Query(cql, 1).Exec()
}
