package oracle

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/retry"
)

// perBoundPartitions is how many partitions each shape is tried on: one row each, with
// a random c0, that the DELETE does not name.
const perBoundPartitions = 120

// TestOracleFunctionPerBound measures, on the Cassandra under test, how often a DELETE
// naming a fresh id (uuid()) in a clustering equality deletes a row it does not name,
// for each shape of seed 20261206's case 743 and its controls, on an ASC and a DESC
// clustering column, and checks the verdict (with the session's schema) for each:
//
//   - a range after the call — `c0 = uuid() AND c1 > ? AND c1 <= ?`, an empty range, a
//     prefix `c0 = uuid()` alone, a batch entry `c1 >= ? AND c1 <= ?` on one value:
//     Cassandra 4.1 and 5.0 evaluate uuid() once per bound (createSlices), and the
//     range tombstone covers the rows whose c0 lies between the two values. Not
//     repeatable, and a hazard even run once.
//   - the control `c0 = uuid() AND c1 = ?` (every clustering column by equality): one
//     evaluation (createClustering), no other row deleted; repeatable.
//
// Cassandra 6.0 (trunk since CASSANDRA-19341) builds both bounds from one evaluation:
// there the range shapes delete nothing either — the verdict stays not repeatable, as
// it cannot know the server's version.
func TestOracleFunctionPerBound(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	p := retry.NewPolicy(retry.WithSchema(retry.SessionSchema(s)))
	evaluatedTwice := !strings.HasPrefix(node.Version(), "6.")
	for _, order := range []string{"ASC", "DESC"} {
		tbl := "pb_" + strings.ToLower(order)
		if err := s.Query(fmt.Sprintf(`CREATE TABLE %s (k bigint, slot int, c0 uuid, c1 bigint, v int,
			PRIMARY KEY ((k, slot), c0, c1)) WITH CLUSTERING ORDER BY (c0 %s, c1 ASC)`, tbl, order)).Exec(); err != nil {
			t.Fatal(err)
		}
		if err := s.AwaitSchemaAgreement(ctx); err != nil {
			t.Fatal(err)
		}
		for si, sh := range []struct {
			name      string
			where     string // after k = ? AND slot = ?
			values    []any
			batch     bool
			destroys  bool // where evaluated per bound
			repeatble bool
		}{
			{"range after the call", "c0 = uuid() AND c1 > ? AND c1 <= ?", []any{int64(-1 << 40), int64(1 << 40)}, false, true, false},
			{"empty range after the call", "c0 = uuid() AND c1 > 10 AND c1 <= -5", nil, false, true, false},
			{"prefix: c1 unrestricted", "c0 = uuid()", nil, false, true, false},
			{"batch entry, range on one value", "c0 = uuid() AND c1 >= ? AND c1 <= ?", []any{int64(7), int64(7)}, true, true, false},
			{"control: every clustering column by equality", "c0 = uuid() AND c1 = ?", []any{int64(7)}, false, false, true},
		} {
			cql := fmt.Sprintf("DELETE FROM %s WHERE k = ? AND slot = ? AND %s", tbl, sh.where)
			v := p.Lint(ks, cql)
			if v.Idempotent != sh.repeatble || (len(v.Hazards) > 0) != sh.destroys {
				t.Errorf("%s %s: verdict repeatable %v hazards %q; want repeatable %v, hazard %v", order, sh.name, v.Idempotent, v.Hazards, sh.repeatble, sh.destroys)
			}
			deleted := 0
			for i := range perBoundPartitions {
				k := int64(si*10_000 + i)
				// A random (version 4) c0, as uuid() makes: Cassandra's UUID order
				// compares the version first, so a v1 id would never lie in the range.
				c0, err := gocql.RandomUUID()
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Query(fmt.Sprintf(`INSERT INTO %s (k, slot, c0, c1, v) VALUES (?, 0, ?, 7, 1)`, tbl), k, c0).Exec(); err != nil {
					t.Fatal(err)
				}
				args := append([]any{k, 0}, sh.values...)
				if sh.batch {
					b := s.NewBatch(gocql.UnloggedBatch)
					b.Query(cql, args...)
					err = s.ExecuteBatch(b)
				} else {
					err = s.Query(cql, args...).Exec()
				}
				if err != nil {
					t.Fatalf("%s %s: %v", order, sh.name, err)
				}
				n := 0
				if err := s.Query(fmt.Sprintf(`SELECT COUNT(*) FROM %s WHERE k = ? AND slot = 0`, tbl), k).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					deleted++
				}
			}
			t.Logf("Cassandra %s, c0 %s, %s: the row it does not name deleted in %d of %d partitions", node.Version(), order, sh.name, deleted, perBoundPartitions)
			switch {
			case sh.destroys && evaluatedTwice && deleted == 0:
				t.Errorf("%s %s: no row deleted in %d partitions; Cassandra %s evaluates uuid() once per bound", order, sh.name, perBoundPartitions, node.Version())
			case (!sh.destroys || !evaluatedTwice) && deleted != 0:
				t.Errorf("%s %s: %d rows it does not name deleted; want 0 (one evaluation)", order, sh.name, deleted)
			}
		}
	}
}
