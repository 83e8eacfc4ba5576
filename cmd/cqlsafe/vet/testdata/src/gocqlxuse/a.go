package gocqlxuse

import (
	"github.com/gocql/gocql"
	gocqlx "github.com/scylladb/gocqlx/v2"
	"github.com/scylladb/gocqlx/v2/qb"
)

type user struct{ ID, Name string }

func builder(s gocqlx.Session, u user) error {
	return qb.Insert("users").Columns("id", "name").Unique().Query(s).
		RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 2}).
		BindStruct(u).ExecRelease() // want `not-idempotent: "INSERT INTO users \(id,name\) VALUES \(\?,\?\) IF NOT EXISTS" is not idempotent`
}

func toCql(s gocqlx.Session, id string) error {
	stmt, names := qb.Update("stats").Add("n").Where(qb.Eq("id")).ToCql()
	return s.Query(stmt, names).Idempotent(true).ExecRelease() // want `not-idempotent: "UPDATE stats SET n=n\+\? WHERE id=\?" is not idempotent`
}

func wrapped(s *gocql.Session, id string) error {
	return gocqlx.Query(s.Query("UPDATE t SET v = now() WHERE id = ?", id), []string{"id"}).ExecRelease() // want `server-nondeterminism: now\(\)`
}

// A builder whose table name is not a constant is judged with the table unknown.
func dynamic(s gocqlx.Session, table string) error {
	return qb.Insert(table).Columns("id").Unique().Query(s).Idempotent(true).ExecRelease() // want `not-idempotent: "INSERT INTO \\"\{table\}\\" \(id\) VALUES \(\?\) IF NOT EXISTS" is not idempotent`
}
