// Package table is a stub of gocqlx's table models for the analyzer's tests: the
// analyzer runs the real package to build the CQL.
package table

import (
	"context"

	gocqlx "github.com/scylladb/gocqlx/v2"
	"github.com/scylladb/gocqlx/v2/qb"
)

type Metadata struct {
	Name    string
	Columns []string
	PartKey []string
	SortKey []string
}

type Table struct{ metadata Metadata }

func New(m Metadata) *Table         { return &Table{metadata: m} }
func (t *Table) Name() string       { return t.metadata.Name }
func (t *Table) Metadata() Metadata { return t.metadata }

func (t *Table) Get(columns ...string) (stmt string, names []string)    { return "", nil }
func (t *Table) Select(columns ...string) (stmt string, names []string) { return "", nil }
func (t *Table) Insert() (stmt string, names []string)                  { return "", nil }
func (t *Table) Update(columns ...string) (stmt string, names []string) { return "", nil }
func (t *Table) Delete(columns ...string) (stmt string, names []string) { return "", nil }

func (t *Table) GetQuery(s gocqlx.Session, columns ...string) *gocqlx.Queryx    { return nil }
func (t *Table) SelectQuery(s gocqlx.Session, columns ...string) *gocqlx.Queryx { return nil }
func (t *Table) InsertQuery(s gocqlx.Session) *gocqlx.Queryx                    { return nil }
func (t *Table) InsertQueryContext(ctx context.Context, s gocqlx.Session) *gocqlx.Queryx {
	return nil
}
func (t *Table) UpdateQuery(s gocqlx.Session, columns ...string) *gocqlx.Queryx { return nil }
func (t *Table) DeleteQuery(s gocqlx.Session, columns ...string) *gocqlx.Queryx { return nil }

func (t *Table) UpdateBuilder(columns ...string) *qb.UpdateBuilder { return nil }
func (t *Table) DeleteBuilder(columns ...string) *qb.DeleteBuilder { return nil }
