package suite

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/keymigrate"
)

// The tests of this file are bugs the adversarial reviews of 2026-11-27 found, each
// described as it was before its fix; each fails on the code before that fix.

// The gocql v1.7 side of integration/v2suite/keymigrate_edges_test.go (which runs each
// case through both drivers), here so that it also runs against the code before the
// move to internal/core/keymigrate.

// kmrBucket is the review migrations' transform: the old key id, bucketed.
func kmrBucket(old map[string]any) (map[string]any, error) {
	id, ok := old["id"].(int)
	if !ok {
		return nil, fmt.Errorf("id %T", old["id"])
	}
	return map[string]any{"bucket": id % 4, "id": id}, nil
}

// kmrSetup creates old (id int PRIMARY KEY, cols) and new (bucket, id, cols) after the
// statements pre, and returns the session and a migration over them.
func kmrSetup(t *testing.T, cols string, pre ...string) (*gocql.Session, *keymigrate.Migration) {
	t.Helper()
	s, ks := node.Keyspace(t)
	harness.Exec(t, s, append(pre, `CREATE TABLE old (id int PRIMARY KEY, `+cols+`)`,
		`CREATE TABLE new (bucket int, id int, `+cols+`, PRIMARY KEY (bucket, id))`)...)
	m, err := keymigrate.New(s, "kmr", describe(t, s, ks, "old"), describe(t, s, ks, "new"), kmrBucket)
	if err != nil {
		t.Fatal(err)
	}
	return s, m
}

// kmrJSON reads every row of a table as Cassandra's JSON of sel, sorted.
func kmrJSON(t *testing.T, s *gocql.Session, sel, table string) []string {
	t.Helper()
	iter := s.Query(`SELECT JSON ` + sel + ` FROM ` + table).Iter()
	var out []string
	var js string
	for iter.Scan(&js) {
		out = append(out, js)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// kmrVerifyDiffers wants Verify to report every one of the n rows different.
func kmrVerifyDiffers(t *testing.T, s *gocql.Session, m *keymigrate.Migration, sel string, n int) {
	t.Helper()
	oldJS, newJS := kmrJSON(t, s, sel, "old"), kmrJSON(t, s, sel, "new")
	for i := range oldJS {
		if oldJS[i] == newJS[i] {
			t.Fatalf("setup: row %d is the same in both tables: %s", i, oldJS[i])
		}
	}
	rep, err := m.Verify(context.Background())
	if err != nil || rep.Checked != int64(n) || rep.Different != int64(n) || rep.OK() {
		t.Fatalf("Verify: %v %v; want all %d rows different:\nold %v\nnew %v", rep, err, n, oldJS, newJS)
	}
}

// TestKeymigrateReviewVerifyTupleElementNullVsZero: a NULL tuple element and a zero one
// (0, empty text, 0x) differ; gocql v1.7's Unmarshal of a tuple fills a NULL element with the
// zero value, and Verify calls them equal.
func TestKeymigrateReviewVerifyTupleElementNullVsZero(t *testing.T) {
	s, m := kmrSetup(t, `tp tuple<int, text, blob>, n int`)
	harness.Exec(t, s,
		`INSERT INTO old (id, tp, n) VALUES (1, (null, 'a', 0x01), 1)`,
		`INSERT INTO new (bucket, id, tp, n) VALUES (1, 1, (0, 'a', 0x01), 1)`,
		`INSERT INTO old (id, tp, n) VALUES (2, (1, null, 0x01), 2)`,
		`INSERT INTO new (bucket, id, tp, n) VALUES (2, 2, (1, '', 0x01), 2)`,
		`INSERT INTO old (id, tp, n) VALUES (3, (1, 'a', null), 3)`,
		`INSERT INTO new (bucket, id, tp, n) VALUES (3, 3, (1, 'a', 0x), 3)`,
		`INSERT INTO old (id, n) VALUES (4, 4)`, // NULL tuple
		`INSERT INTO new (bucket, id, tp, n) VALUES (0, 4, (0, '', 0x), 4)`)
	kmrVerifyDiffers(t, s, m, `id, tp, n`, 4)
}

// TestKeymigrateReviewVerifyUDTFieldNullVsZero: a NULL UDT field and a zero one differ;
// the UDT decodes into a map whose NULL field holds the zero value: Verify calls them
// equal.
func TestKeymigrateReviewVerifyUDTFieldNullVsZero(t *testing.T) {
	s, m := kmrSetup(t, `fu frozen<ua>, n int`, `CREATE TYPE ua (a int, b text)`)
	harness.Exec(t, s,
		`INSERT INTO old (id, fu, n) VALUES (1, {a: null, b: 'x'}, 1)`,
		`INSERT INTO new (bucket, id, fu, n) VALUES (1, 1, {a: 0, b: 'x'}, 1)`,
		`INSERT INTO old (id, fu, n) VALUES (2, {a: 1, b: null}, 2)`,
		`INSERT INTO new (bucket, id, fu, n) VALUES (2, 2, {a: 1, b: ''}, 2)`)
	kmrVerifyDiffers(t, s, m, `id, fu, n`, 2)
}

// TestKeymigrateReviewVerifyNaN: NaN in both tables is the same value; reflect.DeepEqual
// says NaN != NaN and Verify reports the row different.
func TestKeymigrateReviewVerifyNaN(t *testing.T) {
	s, m := kmrSetup(t, `d double, n int`)
	harness.Exec(t, s,
		`INSERT INTO old (id, d, n) VALUES (1, NaN, 1)`,
		`INSERT INTO new (bucket, id, d, n) VALUES (1, 1, NaN, 1)`)
	if rep, err := m.Verify(context.Background()); err != nil || !rep.OK() || rep.Checked != 1 {
		t.Fatalf("Verify of equal rows (d = NaN in both): %v %v", rep, err)
	}
}

// kmrBackfillSame backfills and wants the copy's SELECT JSON of sel to be the source's.
func kmrBackfillSame(t *testing.T, s *gocql.Session, m *keymigrate.Migration, sel string) {
	t.Helper()
	if _, err := m.Backfill(context.Background(), keymigrate.WithRanges(4)); err != nil {
		t.Fatalf("Backfill: %v", err)
	}
	if o, n := kmrJSON(t, s, sel, "old"), kmrJSON(t, s, sel, "new"); !slices.Equal(o, n) {
		t.Fatalf("copy\n%v\nwant\n%v", n, o)
	}
}

// TestKeymigrateReviewBackfillTupleNullUDTElement: a tuple whose UDT element is NULL
// cannot be copied: the element is bound as a Go nil, which gocql refuses for a UDT
// ("cannot marshal <nil> into …ua"), and the whole Backfill stops.
func TestKeymigrateReviewBackfillTupleNullUDTElement(t *testing.T) {
	s, m := kmrSetup(t, `tu tuple<int, frozen<ua>>, n int`, `CREATE TYPE ua (a int, b blob)`)
	harness.Exec(t, s, `INSERT INTO old (id, tu, n) VALUES (1, (1, null), 1)`)
	kmrBackfillSame(t, s, m, `id, tu, n, WRITETIME(tu) AS w`)
}

// TestKeymigrateReviewBackfillTupleNullVectorElement: the same for a NULL vector
// element (gocql v1.7: "can not marshal <nil> into custom(…VectorType…)").
func TestKeymigrateReviewBackfillTupleNullVectorElement(t *testing.T) {
	if before50() {
		t.Skip("no vector type before 5.0")
	}
	s, m := kmrSetup(t, `tv tuple<int, vector<float, 2>>, n int`)
	harness.Exec(t, s, `INSERT INTO old (id, tv, n) VALUES (1, (1, null), 1)`)
	kmrBackfillSame(t, s, m, `id, tv, n, WRITETIME(tv) AS w`)
}

// TestKeymigrateReviewBackfillNonFrozenUDTNullFieldTTL: u written USING TTL 3600 with
// field b null: TTL(u) is [3600, null]; the copy gets no TTL at all.
func TestKeymigrateReviewBackfillNonFrozenUDTNullFieldTTL(t *testing.T) {
	if before50() {
		t.Skip("non-frozen UDTs are refused by Backfill before 5.0")
	}
	s, m := kmrSetup(t, `u ua, n int`, `CREATE TYPE ua (a int, b text)`)
	harness.Exec(t, s, `INSERT INTO old (id, u, n) VALUES (1, {a: 1}, 4) USING TTL 3600`)
	if _, err := m.Backfill(context.Background(), keymigrate.WithRanges(4)); err != nil {
		t.Fatal(err)
	}
	var oldTTL, newTTL []*int
	if err := s.Query(`SELECT TTL(u) FROM old WHERE id = 1`).Scan(&oldTTL); err != nil {
		t.Fatal(err)
	}
	if err := s.Query(`SELECT TTL(u) FROM new WHERE bucket = 1 AND id = 1`).Scan(&newTTL); err != nil {
		t.Fatal(err)
	}
	if len(newTTL) == 0 || newTTL[0] == nil || *newTTL[0] > 3600 {
		str := func(ps []*int) string {
			out := ""
			for _, p := range ps {
				if p == nil {
					out += " null"
				} else {
					out += fmt.Sprint(" ", *p)
				}
			}
			return "[" + out + " ]"
		}
		t.Fatalf("TTL(u) in the source %s, in the copy %s: want field a to expire within 3600 s", str(oldTTL), str(newTTL))
	}
}
