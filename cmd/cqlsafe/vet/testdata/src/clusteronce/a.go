// Package clusteronce builds its retrying cluster inside closures (sync.Once.Do, a
// subtest): the config is made there, so its policy is known.
package clusteronce

import (
	"sync"

	"github.com/gocql/gocql"
)

var (
	once sync.Once
	sess *gocql.Session
)

func session() *gocql.Session {
	once.Do(func() {
		cluster := gocql.NewCluster("127.0.0.1")
		cluster.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 3}
		sess, _ = cluster.CreateSession()
	})
	return sess
}

func claim() error {
	return session().Query("INSERT INTO lease (name) VALUES (?) IF NOT EXISTS", "a").Exec() // want `not-idempotent: "INSERT INTO lease \(name\) VALUES \(\?\) IF NOT EXISTS" is not idempotent`
}

func run(f func()) { f() }

func bump() {
	run(func() {
		cluster := gocql.NewCluster("127.0.0.1")
		cluster.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 3}
		s, _ := cluster.CreateSession()
		_ = s.Query("UPDATE c SET n = n + 1 WHERE id = ?", 1).Exec() // want `not-idempotent: "UPDATE c SET n = n \+ 1 WHERE id = \?" is not idempotent`
	})
}
