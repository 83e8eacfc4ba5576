// Package triage has sites the analyzer cannot judge, each listed with whether it
// writes and what retry is in force there, and CQL held in local variables.
package triage

import "github.com/gocql/gocql"

func connect() (*gocql.Session, error) {
	cluster := gocql.NewCluster("127.0.0.1")
	cluster.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 3}
	return cluster.CreateSession()
}

// A local initialised to a constant and never changed is read like the constant.
func local(s *gocql.Session) error {
	cql := "UPDATE c SET n = n + 1 WHERE id = ?"
	return s.Query(cql, 1).Exec() // want `not-idempotent: "UPDATE c SET n = n \+ 1 WHERE id = \?" is not idempotent`
}

func changed(s *gocql.Session, lwt bool) error {
	cql := "INSERT INTO t (id, v) VALUES (?, ?)"
	if lwt {
		cql += " IF NOT EXISTS"
	}
	return s.Query(cql, 1, 2).WithTimestamp(1).Exec()
}

func read(s *gocql.Session, col string) error {
	return s.Query("SELECT "+col+" FROM t WHERE id = ?", 1).Exec()
}

func passOn(s *gocql.Session, stmt string) error {
	return s.Query(stmt).RetryPolicy(nil).Exec()
}

func readOrBump(s *gocql.Session, write bool) error {
	cql := "SELECT n FROM c WHERE id = ?"
	if write {
		cql = "UPDATE c SET n = n + 1 WHERE id = ?"
	}
	return s.Query(cql, 1).Exec()
}
