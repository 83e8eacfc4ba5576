// Package models stands for schemagen's output: gocqlx table models in a package of
// their own, used by other packages.
package models

import "github.com/scylladb/gocqlx/v2/table"

var StatsMetadata = table.Metadata{
	Name:    "stats",
	Columns: []string{"id", "n"},
	PartKey: []string{"id"},
}

var Stats = table.New(StatsMetadata)

var Users = table.New(table.Metadata{Name: "users", Columns: []string{"id", "name", "tags"}, PartKey: []string{"id"}})

// Named is built from a name known only at run time.
func Named(name string) *table.Table {
	return table.New(table.Metadata{Name: name, Columns: []string{"id"}, PartKey: []string{"id"}})
}

// UsersMeta is read through parentheses around the method.
var UsersMeta = (Users.Metadata)()

// UsersT embeds a table model.
var UsersT = struct{ *table.Table }{Users}
