// Package forkdefault runs on the ScyllaDB fork with no RetryPolicy set here.
package forkdefault

import "github.com/gocql/gocql"

func write(s *gocql.Session, cql string) error {
	return s.Query(cql, 1).Exec()
}
