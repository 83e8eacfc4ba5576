package nondeterminism

import (
	"context"
	"time"

	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/gocql/gocql"
	"github.com/google/uuid"
)

func serverFunctions(s *gocql.Session, id string) error {
	if err := s.Query("INSERT INTO events (id, at) VALUES (uuid(), ?)", time.Now()).Exec(); err != nil { // want `server-nondeterminism: uuid\(\) is evaluated by the server on every attempt`
		return err
	}
	return s.Query("UPDATE users SET seen = currentTimestamp() WHERE id = ?", id).Exec() // want `server-nondeterminism: currentTimestamp\(\)`
}

func mintInsideDo(ctx context.Context, s *gocql.Session, user string) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		id := gocql.TimeUUID() // want `server-nondeterminism: gocql.TimeUUID\(\) inside the function given to retry.Do`
		if err := retry.Exec(ctx, s.Query("INSERT INTO events (id, user) VALUES (?, ?)", id, user)); err != nil {
			return err
		}
		return retry.Exec(ctx, s.Query("INSERT INTO log (user, at) VALUES (?, ?)", user, time.Now())) // want `server-nondeterminism: time.Now\(\) inside the function given to retry.Do`
	})
}

func mintInsideLoop(s *gocql.Session, user string) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		id := uuid.New() // want `server-nondeterminism: uuid.New\(\) inside a retry loop`
		err = s.Query("INSERT INTO events (id, user) VALUES (?, ?)", id, user).Exec()
		if err == nil {
			return nil
		}
	}
	return err
}

// Negative cases.

func mintBefore(ctx context.Context, s *gocql.Session, user string) error {
	id := gocql.TimeUUID()
	now := time.Now()
	return retry.Do(ctx, func(ctx context.Context) error {
		start := time.Now() // only measures: never bound
		_ = start
		return retry.Exec(ctx, s.Query("INSERT INTO events (id, user, at) VALUES (?, ?, ?)", id, user, now))
	})
}

func rangeLoop(s *gocql.Session, users []string) error {
	for _, u := range users {
		if err := s.Query("INSERT INTO events (id, user) VALUES (?, ?)", gocql.TimeUUID(), u).Exec(); err != nil {
			return err
		}
	}
	return nil
}

func readNow(s *gocql.Session) error {
	var t time.Time
	return s.Query("SELECT now() FROM system.local").Scan(&t)
}

// A range DELETE whose clustering equality is uuid(): Cassandra evaluates it once per
// bound and deletes rows between two random values, even run once.
func rangeDeleteByUUID(s *gocql.Session, k int64, from, to int64) error {
	return s.Query("DELETE FROM t_ttl WHERE k = ? AND c0 = uuid() AND c1 > ? AND c1 <= ?", k, from, to).Exec() // want `destructive-delete: c0 = uuid\(\) in a range DELETE`
}
