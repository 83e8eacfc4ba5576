package ignore

import "github.com/gocql/gocql"

func silenced(s *gocql.Session, id string) error {
	//cqlsafe:ignore server-nondeterminism the row is written once by a migration
	if err := s.Query("UPDATE users SET seen = now() WHERE id = ?", id).Exec(); err != nil {
		return err
	}
	return s.Query("INSERT INTO users (id, name) VALUES (?, ?)", id, nil).Exec() //cqlsafe:ignore null-not-unset clearing the name is intended
}

func otherRule(s *gocql.Session, id string) error {
	//cqlsafe:ignore null-not-unset wrong rule: does not silence
	return s.Query("UPDATE users SET seen = now() WHERE id = ?", id).Exec() // want `server-nondeterminism`
}

func tooFar(s *gocql.Session, id string) error {
	//cqlsafe:ignore server-nondeterminism two lines above: does not silence

	return s.Query("UPDATE users SET seen = now() WHERE id = ?", id).Exec() // want `server-nondeterminism`
}
