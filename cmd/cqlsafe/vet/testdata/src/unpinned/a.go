package unpinned

import "github.com/gocql/gocql"

func connect() (*gocql.Session, error) {
	cluster := gocql.NewCluster("127.0.0.1")
	cluster.RetryPolicy = &gocql.ExponentialBackoffRetryPolicy{NumRetries: 3}
	return cluster.CreateSession()
}

func write(s *gocql.Session, id, name string) error {
	return s.Query("UPDATE users SET name = ? WHERE id = ?", name, id).Exec() // want `unpinned-timestamp: "UPDATE users SET name = \? WHERE id = \?" is retried by gocql.ExponentialBackoffRetryPolicy set as the ClusterConfig's RetryPolicy in this package without a pinned timestamp`
}

func lwt(s *gocql.Session, id string) (bool, error) {
	return s.Query("INSERT INTO users (id) VALUES (?) IF NOT EXISTS", id).ScanCAS() // want `not-idempotent: .*ClusterConfig's RetryPolicy`
}

func batch(s *gocql.Session) error {
	b := s.NewBatch(gocql.LoggedBatch)
	b.Query("INSERT INTO a (id, v) VALUES (?, ?)", 1, 2)
	b.Query("INSERT INTO b (id, v) VALUES (?, ?)", 1, 2)
	return s.ExecuteBatch(b) // want `unpinned-timestamp: this batch \("INSERT INTO a .*\)`
}

// Negative cases.

func pinned(s *gocql.Session, ts int64, id, name string) error {
	q := s.Query("UPDATE users SET name = ? WHERE id = ?", name, id)
	q.WithTimestamp(ts)
	return q.Exec()
}

func usingTimestamp(s *gocql.Session, ts int64, id, name string) error {
	return s.Query("UPDATE users USING TIMESTAMP ? SET name = ? WHERE id = ?", ts, name, id).Exec()
}

func pinnedBatch(s *gocql.Session, ts int64) error {
	b := s.NewBatch(gocql.LoggedBatch)
	b.Query("INSERT INTO a (id, v) VALUES (?, ?)", 1, 2)
	b.WithTimestamp(ts)
	return s.ExecuteBatch(b)
}

func read(s *gocql.Session) error {
	var name string
	return s.Query("SELECT name FROM users WHERE id = ?", "a").Scan(&name)
}
