package listschema

import "github.com/gocql/gocql"

func assignList(s *gocql.Session, id string, tags []string) error {
	return s.Query("UPDATE users SET tags = ? WHERE id = ?", tags, id).Exec() // want `list-assignment: non-frozen list "tags" assigned whole from bind marker 1`
}

func insertList(s *gocql.Session, id string, tags []string) error {
	return s.Query("INSERT INTO users (id, tags) VALUES (?, ?)", id, tags).Exec() // want `list-assignment: non-frozen list "tags" assigned whole from bind marker 2`
}

func counterBound(s *gocql.Session) error {
	b := s.NewBatch(gocql.LoggedBatch)
	b.Query("UPDATE stats SET logins = logins + ? WHERE id = ?", 2, "a") // want `list-assignment: counter update in a LOGGED batch`
	return s.ExecuteBatch(b)
}

func keyNil(s *gocql.Session) error {
	// "bucket" is a clustering column: nil there is rejected, not a tombstone.
	return s.Query("INSERT INTO events (bucket, id, v) VALUES (?, ?, ?)", 1, nil, nil).Exec() // want `null-not-unset: nil bound to column "v"`
}

func unloggedPartitions(s *gocql.Session) error {
	b := s.NewBatch(gocql.UnloggedBatch)
	b.Query("INSERT INTO events (bucket, id, v) VALUES (?, ?, ?)", 1, "a", "x")
	b.Query("INSERT INTO events (bucket, id, v) VALUES (?, ?, ?)", 2, "a", "x") // want `list-assignment: UNLOGGED batch writes events partitions bucket=1 and bucket=2`
	return s.ExecuteBatch(b)
}

// Negative cases.

func assignFrozen(s *gocql.Session, id string, tags []string) error {
	return s.Query("UPDATE users SET frozen_tags = ?, names = ? WHERE id = ?", tags, tags, id).Exec()
}

func unloggedSamePartition(s *gocql.Session) error {
	b := s.NewBatch(gocql.UnloggedBatch)
	b.Query("INSERT INTO events (bucket, id, v) VALUES (?, ?, ?)", 1, "a", "x")
	b.Query("INSERT INTO events (bucket, id, v) VALUES (?, ?, ?)", 1, "b", "x")
	return s.ExecuteBatch(b)
}

// A table known only at run time: the schema does not apply. What holds whatever its
// columns are is reported; the rest is listed, not judged.
func runtimeSetAdd(s *gocql.Session, tbl string, names []string) error {
	return s.Query("UPDATE "+tbl+" SET names = names + ? WHERE id = ?", names, "a").Idempotent(true).Exec()
}

func runtimeListBind(s *gocql.Session, tbl string, tags []string) error {
	return s.Query("UPDATE "+tbl+" SET tags = ? WHERE id = ?", tags, "a").WithTimestamp(1).Exec()
}

func runtimeLWT(s *gocql.Session, tbl string) error {
	return s.Query("INSERT INTO "+tbl+" (id) VALUES (?) IF NOT EXISTS", "a").Idempotent(true).Exec() // want `not-idempotent: .*lightweight transaction`
}

func runtimeCounter(s *gocql.Session, tbl string) error {
	return s.Query("UPDATE "+tbl+" SET n = n + 1 WHERE id = ?", "a").Idempotent(true).Exec() // want `not-idempotent: .*counter update`
}
