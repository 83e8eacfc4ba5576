// Package gocqlxmodel writes through gocqlx table models: the statements are built
// the way gocqlx builds them from the models' Metadata.
package gocqlxmodel

import (
	"context"

	"gocqlxmodel/models"

	"github.com/gocql/gocql"
	gocqlx "github.com/scylladb/gocqlx/v2"
	"github.com/scylladb/gocqlx/v2/qb"
	"github.com/scylladb/gocqlx/v2/table"
)

type user struct{ ID, Name string }

func insertUser(s gocqlx.Session, u user) error {
	return models.Users.InsertQuery(s).RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 2}).BindStruct(u).ExecRelease() // want `unpinned-timestamp: "INSERT INTO users \(id,name,tags\) VALUES \(\?,\?,\?\)" is retried`
}

func bump(s gocqlx.Session) error {
	return models.Stats.UpdateBuilder().Add("n").Query(s).Idempotent(true).ExecRelease() // want `not-idempotent: "UPDATE stats SET n=n\+\? WHERE id=\?" is not idempotent`
}

func local(s gocqlx.Session) error {
	events := table.New(table.Metadata{Name: "events", Columns: []string{"id", "at", "v"}, PartKey: []string{"id"}, SortKey: []string{"at"}})
	stmt, names := events.Update("v")
	return s.Query(stmt, names).RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 2}).ExecRelease() // want `unpinned-timestamp: "UPDATE events SET v=\? WHERE id=\? AND at=\?" is retried`
}

func deleteUser(s gocqlx.Session) error {
	return s.Query(models.Users.Delete()).RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 2}).ExecRelease() // want `unpinned-timestamp: "DELETE FROM users WHERE id=\?" is retried`
}

// Negative: an idempotent model write with no retrying policy.
func plain(s gocqlx.Session, u user) error {
	return models.Stats.UpdateQuery(s, "n").BindStruct(u).ExecRelease()
}

type store struct {
	session gocqlx.Session
	table   *table.Table
}

// The table is a struct field: its name is not known, the statement's own rules are.
func (s *store) forget() error {
	return qb.Delete(s.table.Name()).Where(qb.Eq("cluster_id")).Query(s.session).RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 2}).ExecRelease() // want `unpinned-timestamp: "DELETE FROM \\"\{s.table.Name\(\)\}\\" WHERE cluster_id=\?" is retried`
}

func (s *store) hit(name string) error {
	return qb.Update(name).Add("hits").Where(qb.Eq("id")).Query(s.session).Idempotent(true).ExecRelease() // want `not-idempotent: "UPDATE \\"\{name\}\\" SET hits=hits\+\? WHERE id=\?" is not idempotent`
}

// Listed, not analysed: a model held in a struct field, and one built from a name
// known only at run time.
func (s *store) save(u user) error {
	return s.table.InsertQuery(s.session).BindStruct(u).ExecRelease()
}

func named(s gocqlx.Session, u user) error {
	return models.Named("t").InsertQuery(s).BindStruct(u).ExecRelease()
}

// A model's Metadata read through (users.Metadata)() in another package.
func insertMeta(s gocqlx.Session, u user) error {
	return table.New(models.UsersMeta).InsertQuery(s).RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 2}).BindStruct(u).ExecRelease() // want `unpinned-timestamp: "INSERT INTO users \(id,name,tags\) VALUES \(\?,\?,\?\)" is retried`
}

// stmt, names reused for a second statement: the first Query's CQL is not the last
// assignment's (listed, not judged as the counter update).
func reuse(s gocqlx.Session) {
	stmt, names := models.Users.Update("name")
	_ = s.Query(stmt, names).Idempotent(true).ExecRelease()
	stmt, names = qb.Update("stats").Add("n").Where(qb.Eq("id")).ToCql()
	_ = s.Query(stmt, names).ExecRelease()
}

// Metadata copied and changed in part: listed, not read as the copied Metadata.
func audit(s gocqlx.Session) error {
	m := models.StatsMetadata
	m.Name = "audit"
	m.Columns = []string{"id", "n"}
	return table.New(m).InsertQuery(s).RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 2}).ExecRelease()
}

func bumpCtx(ctx context.Context, s gocqlx.Session) error {
	return qb.Update("stats").Add("n").Where(qb.Eq("id")).QueryContext(ctx, s).Idempotent(true).ExecRelease() // want `not-idempotent: "UPDATE stats SET n=n\+\? WHERE id=\?" is not idempotent`
}

// Listed with their kind and the reason: a qb.Select with a column not a constant, a
// builder from a model held in a struct field.
func (s *store) pick(col string) error {
	return qb.Select("users").Columns(col).Where(qb.Eq("id")).Query(s.session).ExecRelease()
}

func (s *store) count() error {
	return s.table.UpdateBuilder().Add("n").Query(s.session).ExecRelease()
}

func (s *store) put() error {
	return s.session.Query(s.table.Insert()).ExecRelease()
}

type inserter interface {
	InsertQuery(s gocqlx.Session) *gocqlx.Queryx
}

func viaInterface(s gocqlx.Session, m inserter) error {
	return m.InsertQuery(s).ExecRelease()
}

func viaValue(s gocqlx.Session) error {
	ins := models.Users.InsertQuery
	return ins(s).ExecRelease()
}

func embedded(s gocqlx.Session) error {
	return models.UsersT.InsertQuery(s).ExecRelease()
}
