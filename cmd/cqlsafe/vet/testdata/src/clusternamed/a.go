// Package clusternamed sets a retry policy in a named configuring function handed to a
// helper: the ClusterConfig is its parameter, so no session is taken as retrying.
package clusternamed

import "github.com/gocql/gocql"

func sessionWith(configure func(*gocql.ClusterConfig)) *gocql.Session {
	cluster := gocql.NewCluster("127.0.0.1")
	if configure != nil {
		configure(cluster)
	}
	s, _ := cluster.CreateSession()
	return s
}

func withRetries(cl *gocql.ClusterConfig) {
	(*cl).RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 3}
}

func retrying() *gocql.Session { return sessionWith(withRetries) }

func claim() error {
	s := sessionWith(nil)
	return s.Query("INSERT INTO lease (name) VALUES (?) IF NOT EXISTS", "a").Exec()
}
