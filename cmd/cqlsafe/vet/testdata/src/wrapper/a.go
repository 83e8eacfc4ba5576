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

func byColumn(s *gocql.Session, column string) error {
	return s.Query(fmt.Sprintf("DELETE FROM t WHERE %s = ?", column), 1).Exec()
}

func constant(s *gocql.Session) error {
	return s.Query("UPDATE t SET l = [] WHERE id = ?", 1).Exec() // an empty list: repeatable, not reported
}

// fill adds a write to a batch its caller executes: the CQL is read here, how it is
// executed (retry policy, timestamp) is not.
func fill(b *gocql.Batch) {
	b.Query("INSERT INTO t (id, v) VALUES (?, ?)", 1, 2)
}

// handOff passes its query on: executed by another function.
func handOff(s *gocql.Session) error {
	return run(s.Query("DELETE FROM t WHERE id = ?", 1))
}

func run(q *gocql.Query) error { return q.Exec() }
