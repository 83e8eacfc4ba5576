// Package qb is a stub of gocqlx's query builder for the analyzer's tests: the
// analyzer runs the real qb to build the CQL.
package qb

import (
	"context"

	gocqlx "github.com/scylladb/gocqlx/v2"
)

type Cmp struct{}

func Eq(column string) Cmp { return Cmp{} }

type InsertBuilder struct{}

func Insert(table string) *InsertBuilder                          { return &InsertBuilder{} }
func (b *InsertBuilder) Columns(columns ...string) *InsertBuilder { return b }
func (b *InsertBuilder) Unique() *InsertBuilder                   { return b }
func (b *InsertBuilder) ToCql() (string, []string)                { return "", nil }
func (b *InsertBuilder) Query(s gocqlx.Session) *gocqlx.Queryx    { return nil }

type UpdateBuilder struct{}

func Update(table string) *UpdateBuilder                       { return &UpdateBuilder{} }
func (b *UpdateBuilder) Set(columns ...string) *UpdateBuilder  { return b }
func (b *UpdateBuilder) Add(column string) *UpdateBuilder      { return b }
func (b *UpdateBuilder) Where(w ...Cmp) *UpdateBuilder         { return b }
func (b *UpdateBuilder) ToCql() (string, []string)             { return "", nil }
func (b *UpdateBuilder) Query(s gocqlx.Session) *gocqlx.Queryx { return nil }
func (b *UpdateBuilder) QueryContext(ctx context.Context, s gocqlx.Session) *gocqlx.Queryx {
	return nil
}

type DeleteBuilder struct{}

func Delete(table string) *DeleteBuilder                          { return &DeleteBuilder{} }
func (b *DeleteBuilder) Columns(columns ...string) *DeleteBuilder { return b }
func (b *DeleteBuilder) Where(w ...Cmp) *DeleteBuilder            { return b }
func (b *DeleteBuilder) ToCql() (string, []string)                { return "", nil }
func (b *DeleteBuilder) Query(s gocqlx.Session) *gocqlx.Queryx    { return nil }

type SelectBuilder struct{}

func Select(table string) *SelectBuilder                       { return &SelectBuilder{} }
func (b *SelectBuilder) Where(w ...Cmp) *SelectBuilder         { return b }
func (b *SelectBuilder) ToCql() (string, []string)             { return "", nil }
func (b *SelectBuilder) Query(s gocqlx.Session) *gocqlx.Queryx { return nil }
func (b *SelectBuilder) Columns(c ...string) *SelectBuilder    { return b }
