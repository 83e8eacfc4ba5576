package suite

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
)

// review13List reads list l of row id.
func review13List(t *testing.T, s *gocql.Session, table string, id int) string {
	t.Helper()
	var l []int
	if err := s.Query(fmt.Sprintf(`SELECT l FROM %s WHERE id = ?`, table), id).Scan(&l); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(l)
}

// TestReview13InsertJSONStringEncodedList: Cassandra's fromJson accepts a collection
// given as a JSON string holding the JSON array ({"l": "[7,8]"}). The classifier only
// looks for a JSON array, so the Policy (with the session's schema) judges the write
// repeatable and re-sends it after a dropped response: the list duplicates.
func TestReview13InsertJSONStringEncodedList(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE j (id int PRIMARY KEY, l list<int>)`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	p := retry.NewPolicy(retry.WithSchema(retry.SessionSchema(s)), retry.WithMaxAttempts(4),
		retry.WithBackoff(time.Millisecond, 5*time.Millisecond))
	ctx := context.Background()
	const stmt = `INSERT INTO j JSON ?`
	// Warm up (prepare) fault-free, and check Cassandra takes the string-encoded list.
	if err := p.Exec(ctx, s.Query(stmt, `{"id": 0, "l": "[1,2]"}`)); err != nil {
		t.Fatal(err)
	}
	if got := review13List(t, s0, "j", 0); got != "[1 2]" {
		t.Fatalf("warm-up row: l = %s, want [1 2]", got)
	}
	if v := p.Repeatable(ks, stmt, []any{`{"id": 1, "l": "[7,8]"}`}); v.Idempotent {
		t.Errorf("Repeatable says a string-encoded list is repeatable")
	}
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("INSERT INTO j")))
	err := p.Exec(ctx, s.Query(stmt, `{"id": 1, "l": "[7,8]"}`))
	t.Logf("Exec: %v; dropped %d, hidden %d", err, px.Stats().Dropped.Load(), px.Stats().Hidden.Load())
	if px.Stats().Dropped.Load() != 1 || px.Stats().Hidden.Load() != 0 {
		t.Fatalf("fault not injected as planned")
	}
	if got := review13List(t, s0, "j", 1); got != "[7 8]" {
		t.Errorf("l = %s after one dropped response, want [7 8]", got)
	}
	// Same with a literal document: Classify calls it idempotent.
	lit := `INSERT INTO j JSON '{"id": 2, "l": "[7,8]"}'`
	if v := retry.Classify(lit); v.Idempotent {
		t.Errorf("Classify(%s) idempotent", lit)
	}
}

// TestReview13TypeHintedListMarker: a bind marker with a type hint, (list<int>)?, is
// still a whole-list assignment to a non-frozen list; the classifier only checks a
// value that is exactly one bind marker, so it calls the statement repeatable (even
// with schema metadata) and the Policy re-sends it.
func TestReview13TypeHintedListMarker(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE h (id int PRIMARY KEY, l list<int>)`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	p := retry.NewPolicy(retry.WithSchema(retry.SessionSchema(s)), retry.WithMaxAttempts(4),
		retry.WithBackoff(time.Millisecond, 5*time.Millisecond))
	ctx := context.Background()
	for i, stmt := range []string{
		`INSERT INTO h (id, l) VALUES (?, (list<int>)?)`,
		`UPDATE h SET l = (list<int>)? WHERE id = ?`,
	} {
		args := func(id int) []any {
			if i == 0 {
				return []any{id, []int{7, 8}}
			}
			return []any{[]int{7, 8}, id}
		}
		warm, id := 10*(i+1), 10*(i+1)+1
		if err := p.Exec(ctx, s.Query(stmt, args(warm)...)); err != nil {
			t.Fatalf("%s: warm-up: %v", stmt, err)
		}
		if v := p.Repeatable(ks, stmt, args(id)); v.Idempotent {
			t.Errorf("%s: Repeatable says idempotent", stmt)
		}
		before := px.Stats().Dropped.Load()
		px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("h ")))
		err := p.Exec(ctx, s.Query(stmt, args(id)...))
		t.Logf("%s: Exec: %v; dropped %d, hidden %d", stmt, err, px.Stats().Dropped.Load()-before, px.Stats().Hidden.Load())
		if px.Stats().Dropped.Load()-before != 1 || px.Stats().Hidden.Load() != 0 {
			t.Fatalf("fault not injected as planned")
		}
		if got := review13List(t, s0, "h", id); got != "[7 8]" {
			t.Errorf("%s: l = %s after one dropped response, want [7 8]", stmt, got)
		}
	}
}

// TestReview13DoPointerValueChangedOnRerun: Do snapshots only the slice of bound values,
// not what they point to. fn mints the id into a variable outside it and binds &id: on
// the re-run, the remembered values point at the new id, DeepEqual sees no change, and
// the step is re-sent under the first attempt's timestamp: a second row.
func TestReview13DoPointerValueChangedOnRerun(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE ev (id timeuuid PRIMARY KEY, v text)`)
	s, px := proxied(t, ks, 200*time.Millisecond)
	// Warm up fault-free so the dropped frames are EXECUTEs that applied.
	if err := s.Query(`INSERT INTO ev (id, v) VALUES (?, ?)`, gocql.TimeUUID(), "warm").Exec(); err != nil {
		t.Fatal(err)
	}
	px.SetRule(faultproxy.DropNext(2, faultproxy.Writes("INSERT INTO ev")))
	runs := 0
	var id gocql.UUID
	err := retry.Do(context.Background(), func(ctx context.Context) error {
		runs++
		id = gocql.TimeUUID() // minted inside fn, bound through a pointer
		return retry.Exec(ctx, s.Query(`INSERT INTO ev (id, v) VALUES (?, ?)`, &id, "x"))
	}, retry.WithMaxAttempts(2), retry.WithBackoff(time.Millisecond, time.Millisecond))
	t.Logf("Do: %v after %d runs; dropped %d, hidden %d", err, runs, px.Stats().Dropped.Load(), px.Stats().Hidden.Load())
	if px.Stats().Hidden.Load() != 0 {
		t.Fatalf("a fault hid a server error")
	}
	var n int
	if err := s0.Query(`SELECT COUNT(*) FROM ev`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("ev holds %d rows besides the warm-up row, want 1 (Do re-sent the step with a new id under the first timestamp)", n-1)
	}
	if runs == 2 && !errors.Is(err, retry.ErrNondeterministic) {
		t.Errorf("err = %v, want ErrNondeterministic on the re-run", err)
	}
}

// review13Ints binds a list through gocql.Marshaler, as wrappers and ORMs do.
type review13Ints struct{ v []int }

func (l review13Ints) MarshalCQL(info gocql.TypeInfo) ([]byte, error) {
	return gocql.Marshal(info, l.v)
}

// TestReview13ListValuesTheVerdictCannotSee: the value check runs on q.Values(). A query
// built with Session.Bind (values from a binder at execution time) has none, and a
// list behind a gocql.Marshaler is not "list-like" to the shape check of a Policy
// without schema: both are judged repeatable, re-sent after a dropped response, and
// the list duplicates.
func TestReview13ListValuesTheVerdictCannotSee(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE b (id int PRIMARY KEY, l list<int>)`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	const stmt = `UPDATE b SET l = ? WHERE id = ?`
	withSchema := retry.NewPolicy(retry.WithSchema(retry.SessionSchema(s)), retry.WithMaxAttempts(4),
		retry.WithBackoff(time.Millisecond, 5*time.Millisecond))
	noSchema := retry.NewPolicy(retry.WithMaxAttempts(4), retry.WithBackoff(time.Millisecond, 5*time.Millisecond))
	ctx := context.Background()
	if err := withSchema.Exec(ctx, s.Query(stmt, []int{1}, 0)); err != nil { // warm up
		t.Fatal(err)
	}
	cases := []struct {
		name string
		p    *retry.Policy
		q    func(id int) *gocql.Query
	}{
		{"Session.Bind, schema known", withSchema, func(id int) *gocql.Query {
			return s.Bind(stmt, func(*gocql.QueryInfo) ([]any, error) { return []any{[]int{7, 8}, id}, nil })
		}},
		{"gocql.Marshaler, no schema", noSchema, func(id int) *gocql.Query {
			return s.Query(stmt, review13Ints{[]int{7, 8}}, id)
		}},
	}
	for i, c := range cases {
		id := i + 1
		before := px.Stats().Dropped.Load()
		px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE b")))
		err := c.p.Exec(ctx, c.q(id))
		t.Logf("%s: Exec: %v; dropped %d, hidden %d", c.name, err, px.Stats().Dropped.Load()-before, px.Stats().Hidden.Load())
		if px.Stats().Dropped.Load()-before != 1 || px.Stats().Hidden.Load() != 0 {
			t.Fatalf("fault not injected as planned")
		}
		if got := review13List(t, s0, "b", id); got != "[7 8]" {
			t.Errorf("%s: l = %s after one dropped response, want [7 8]", c.name, got)
		}
	}
}

// TestReview13OverwriteReapplyWithTimestamp: overwrite's docs still promise that an
// overwrite is idempotent and that WithTimestamp re-applies one "with its original
// timestamp" (and the package doc: "so an overwrite is idempotent"). With a non-empty
// non-frozen list the library no longer retries, but a caller following the docs
// re-applies and the list duplicates; nothing refuses the second call.
func TestReview13OverwriteReapplyWithTimestamp(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s, `CREATE TABLE ol (id int PRIMARY KEY, l list<int>, v text)`)
	tbl := describe(t, s, ks, "ol")
	row := map[string]any{"id": 1, "l": []int{7, 8}, "v": "x"}
	res, err := overwrite.Row(ctx, s, tbl, row)
	if err != nil {
		t.Fatal(err)
	}
	// What a caller does after an OutcomeUnknownError, as WithTimestamp's doc says.
	_, err = overwrite.Row(ctx, s, tbl, row, overwrite.WithTimestamp(res.Timestamp))
	t.Logf("re-apply with WithTimestamp(%d): %v", res.Timestamp, err)
	if got := review13List(t, s, "ol", 1); got != "[7 8]" && err == nil {
		t.Errorf("l = %s after re-applying with the original timestamp, want [7 8] or an error refusing it", got)
	}
}
