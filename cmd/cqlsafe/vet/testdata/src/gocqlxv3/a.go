// Package gocqlxv3 writes through gocqlx v3 table models.
package gocqlxv3

import (
	"github.com/gocql/gocql"
	gocqlx "github.com/scylladb/gocqlx/v3"
	"github.com/scylladb/gocqlx/v3/table"
)

var runs = table.New(table.Metadata{Name: "repair_run", Columns: []string{"cluster_id", "id", "state"}, PartKey: []string{"cluster_id"}, SortKey: []string{"id"}}) // want runs:"model\\(repair_run\\)"

func setState(s gocqlx.Session, r any) error {
	return runs.UpdateQuery(s, "state").RetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 2}).BindStruct(r).ExecRelease() // want `unpinned-timestamp: "UPDATE repair_run SET state=\? WHERE cluster_id=\? AND id=\?" is retried`
}

func counted(s gocqlx.Session) error {
	return runs.UpdateBuilder().Add("state").Query(s).Idempotent(true).ExecRelease() // want `not-idempotent: "UPDATE repair_run SET state=state\+\? WHERE cluster_id=\? AN\.\.\."`
}
