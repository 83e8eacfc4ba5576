package lists

import (
	"context"

	"github.com/gocql/gocql"
)

func listLiteral(s *gocql.Session, id string) error {
	return s.Query("UPDATE users SET tags = ['a', 'b'] WHERE id = ?", id).Exec() // want `list-assignment: list literal assigned to "tags"`
}

func counterInLoggedBatch(s *gocql.Session) error {
	b := s.NewBatch(gocql.LoggedBatch)
	b.Query("INSERT INTO users (id, name) VALUES (?, ?)", "a", "n")
	b.Query("UPDATE stats SET logins = logins + 1 WHERE id = ?", "a") // want `list-assignment: counter update in a LOGGED batch`
	return s.ExecuteBatch(b)
}

func counterInLoggedBatchText(s *gocql.Session) error {
	return s.Query("BEGIN BATCH UPDATE stats SET logins = logins + 1 WHERE id = 'a'; APPLY BATCH").Exec() // want `list-assignment: counter update in a LOGGED batch`
}

func unloggedTwoTables(s *gocql.Session) error {
	b := gocql.NewBatch(gocql.UnloggedBatch)
	b.Query("INSERT INTO users (id, name) VALUES (?, ?)", "a", "n")
	b.Query("INSERT INTO users_by_name (name, id) VALUES (?, ?)", "n", "a") // want `list-assignment: UNLOGGED batch writes tables users and users_by_name`
	return s.ExecuteBatch(b)
}

func unloggedTwoKeys(s *gocql.Session) error {
	b := s.NewBatch(gocql.UnloggedBatch)
	b.Query("UPDATE users SET name = ? WHERE id = 'a'", "n")
	b.Query("UPDATE users SET name = ? WHERE id = 'b'", "m") // want `list-assignment: UNLOGGED batch writes users partitions id=a and id=b`
	return s.ExecuteBatch(b)
}

func unloggedText(s *gocql.Session) error {
	return s.Query("BEGIN UNLOGGED BATCH INSERT INTO a (id) VALUES (1); INSERT INTO b (id) VALUES (1); APPLY BATCH").Exec() // want `list-assignment: UNLOGGED batch writes tables a and b`
}

// Negative cases.

func setLiteral(s *gocql.Session, id string) error {
	return s.Query("UPDATE users SET tags = {'a', 'b'} WHERE id = ?", id).Exec()
}

func boundList(s *gocql.Session, id string, tags []string) error {
	// Without a schema the column's type is not known.
	return s.Query("UPDATE users SET tags = ? WHERE id = ?", tags, id).Exec()
}

func counterBatch(s *gocql.Session) error {
	b := s.NewBatch(gocql.CounterBatch)
	b.Query("UPDATE stats SET logins = logins + 1 WHERE id = ?", "a")
	return s.ExecuteBatch(b)
}

func unloggedOnePartition(s *gocql.Session) error {
	b := s.NewBatch(gocql.UnloggedBatch)
	b.Query("DELETE FROM events WHERE id = ?", "a")
	b.Query("INSERT INTO events (id, seq, v) VALUES (?, ?, ?)", "a", 1, "x")
	return s.ExecuteBatch(b)
}

func unloggedLoop(s *gocql.Session, ids []string) error {
	b := s.NewBatch(gocql.UnloggedBatch)
	for _, id := range ids {
		b.Query("INSERT INTO events (id, seq) VALUES (?, ?)", id, 1)
	}
	return s.ExecuteBatch(b)
}

func listAppendInLoggedBatch(s *gocql.Session) error {
	b := s.NewBatch(gocql.LoggedBatch)
	b.Query("UPDATE l SET items = items + [1] WHERE id = ?", 1)
	b.Query("UPDATE c SET n = n - ? WHERE id = ?", 1, 1) // without a schema: a counter, a list or a set
	return s.ExecuteBatch(b)
}

// The values bound after a context are read as those of Query: nil is a null, not a list.
func clearTagsCtx(ctx context.Context, s *gocql.Session) error {
	return s.QueryWithContext(ctx, "UPDATE users SET tags = ? WHERE id = ?", nil, 1).Exec() // want `null-not-unset: nil bound to column "tags"`
}

func clearTags(s *gocql.Session) error {
	return s.Query("UPDATE users SET tags = ? WHERE id = ?", nil, 1).Exec() // want `null-not-unset: nil bound to column "tags"`
}
