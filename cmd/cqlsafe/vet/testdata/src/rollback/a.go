package rollback

import "github.com/gocql/gocql"

func createUser(s *gocql.Session, id, email string) error {
	if err := s.Query("INSERT INTO users (id, email) VALUES (?, ?)", id, email).Exec(); err != nil {
		return err
	}
	err := s.Query("INSERT INTO users_by_email (email, id) VALUES (?, ?)", email, id).Exec()
	if err != nil {
		_ = s.Query("DELETE FROM users WHERE id = ?", id).Exec() // want `rollback: "DELETE FROM users WHERE id = \?" in the error branch of a failed write undoes an earlier write`
		return err
	}
	return nil
}

func undoUpdate(s *gocql.Session, id, old, name string) error {
	if err := s.Query("UPDATE users SET name = ? WHERE id = ?", name, id).Exec(); err != nil {
		return err
	}
	if err := s.Query("UPDATE profiles SET name = ? WHERE id = ?", name, id).Exec(); err != nil {
		s.Query("UPDATE users SET name = ? WHERE id = ?", old, id).Exec() // want `rollback: "UPDATE users SET name = \? .*`
		return err
	}
	return nil
}

// Negative cases.

func retryInstead(s *gocql.Session, id, email string) error {
	if err := s.Query("INSERT INTO users (id, email) VALUES (?, ?)", id, email).Exec(); err != nil {
		return err
	}
	q := s.Query("INSERT INTO users_by_email (email, id) VALUES (?, ?)", email, id)
	if err := q.Exec(); err != nil {
		return q.Exec()
	}
	return nil
}

func cleanupOtherTable(s *gocql.Session, id string) error {
	if err := s.Query("INSERT INTO users (id) VALUES (?)", id).Exec(); err != nil {
		// A table this function never wrote: not a compensation.
		s.Query("DELETE FROM sessions WHERE id = ?", id).Exec()
		return err
	}
	return nil
}

func afterRead(s *gocql.Session, id string) error {
	var n int
	if err := s.Query("SELECT n FROM users WHERE id = ?", id).Scan(&n); err != nil {
		s.Query("DELETE FROM users WHERE id = ?", id).Exec()
		return err
	}
	return nil
}
