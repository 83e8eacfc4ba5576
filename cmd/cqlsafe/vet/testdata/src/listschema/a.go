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
