// Package clusterlit makes one retrying ClusterConfig (a literal in a callback) and
// one with the driver's default, no retries: which session runs a statement is not
// visible, so no session is taken as retrying.
package clusterlit

import "github.com/gocql/gocql"

func sessionWith(mk func() *gocql.ClusterConfig) *gocql.Session {
	s, _ := mk().CreateSession()
	return s
}

func retrying() *gocql.Session {
	return sessionWith(func() *gocql.ClusterConfig {
		return &gocql.ClusterConfig{Hosts: []string{"h"}, RetryPolicy: &gocql.SimpleRetryPolicy{NumRetries: 3}}
	})
}

func claim() error {
	s := sessionWith(func() *gocql.ClusterConfig { return gocql.NewCluster("h") })
	return s.Query("INSERT INTO lease (name) VALUES (?) IF NOT EXISTS", "a").Exec()
}
