package nullunset

import "github.com/gocql/gocql"

func insert(s *gocql.Session, id string) error {
	return s.Query("INSERT INTO users (id, name, email) VALUES (?, ?, ?)", id, nil, "e").Exec() // want `null-not-unset: nil bound to column "name" writes a NULL`
}

func update(s *gocql.Session, id string) error {
	return s.Query("UPDATE users SET name = ?, age = ? WHERE id = ?", (*string)(nil), 3, id).Exec() // want `null-not-unset: nil bound to column "name"`
}

func batch(s *gocql.Session) {
	b := s.NewBatch(gocql.LoggedBatch)
	b.Query("INSERT INTO users (id, tags) VALUES (?, ?)", "a", []string(nil)) // want `null-not-unset: nil bound to column "tags"`
}

// Negative cases.

func unset(s *gocql.Session, id string) error {
	return s.Query("INSERT INTO users (id, name) VALUES (?, ?)", id, gocql.UnsetValue).Exec()
}

func firstColumn(s *gocql.Session) error {
	// Taken as the partition key without a schema: Cassandra rejects it, no tombstone.
	return s.Query("INSERT INTO users (id, name) VALUES (?, ?)", nil, "n").Exec()
}

func whereNil(s *gocql.Session) error {
	return s.Query("UPDATE users SET name = ? WHERE id = ?", "n", nil).Exec()
}

func deleteNil(s *gocql.Session) error {
	return s.Query("DELETE FROM users WHERE id = ?", nil).Exec()
}

func spread(s *gocql.Session, args []interface{}) error {
	return s.Query("INSERT INTO users (id, name) VALUES (?, ?)", args...).Exec()
}

func notNil(s *gocql.Session, name *string) error {
	return s.Query("INSERT INTO users (id, name) VALUES (?, ?)", "a", name).Exec()
}
