// Package wrapper hides gocql behind its own session type, as Temporal's and Cadence's
// persistence layers do.
package wrapper

import (
	"fmt"

	"github.com/gocql/gocql"
)

type Session struct{ s *gocql.Session }

// Query passes its CQL on: the statements are at its callers.
func (w *Session) Query(stmt string, values ...interface{}) *gocql.Query {
	return w.s.Query(stmt, values...)
}

func byTable(s *gocql.Session, table string) error {
	return s.Query(fmt.Sprintf("DELETE FROM %s WHERE id = ?", table), 1).Exec()
}

func constant(s *gocql.Session) error {
	return s.Query("UPDATE t SET l = [] WHERE id = ?", 1).Exec() // an empty list: repeatable, not reported
}
