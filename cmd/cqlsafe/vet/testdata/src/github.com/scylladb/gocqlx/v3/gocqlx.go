// Package gocqlx is a stub of github.com/scylladb/gocqlx/v3 for the analyzer's tests.
package gocqlx

import (
	"context"

	"github.com/gocql/gocql"
)

type Session struct{ *gocql.Session }

type Queryx struct{ *gocql.Query }

func (s Session) Query(stmt string, names []string) *Queryx { return &Queryx{} }
func Query(q *gocql.Query, names []string) *Queryx          { return &Queryx{Query: q} }

func (q *Queryx) BindStruct(arg interface{}) *Queryx { return q }
func (q *Queryx) ExecRelease() error                 { return nil }

func (q *Queryx) RetryPolicy(r gocql.RetryPolicy) *Queryx { return q }
func (q *Queryx) Idempotent(v bool) *Queryx               { return q }
func (q *Queryx) WithTimestamp(ts int64) *Queryx          { return q }

func (s Session) ContextQuery(ctx context.Context, stmt string, names []string) *Queryx {
	return &Queryx{}
}
func (s Session) ExecStmt(stmt string) error { return nil }
