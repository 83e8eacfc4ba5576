// Package clustercallback sets a retry policy on one ClusterConfig through a callback:
// which sessions it reaches is not visible here, so no session is taken as retrying.
package clustercallback

import "github.com/gocql/gocql"

func sessionWith(configure func(*gocql.ClusterConfig)) *gocql.Session {
	cluster := gocql.NewCluster("127.0.0.1")
	if configure != nil {
		configure(cluster)
	}
	s, _ := cluster.CreateSession()
	return s
}

func retrying() *gocql.Session {
	return sessionWith(func(cl *gocql.ClusterConfig) { cl.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 3} })
}

func claim() error {
	s := sessionWith(nil)
	return s.Query("INSERT INTO lease (name) VALUES (?) IF NOT EXISTS", "a").Exec()
}
