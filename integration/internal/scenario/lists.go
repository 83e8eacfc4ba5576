package scenario

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
)

// DefaultPolicyLists: a Policy with no schema (NewPolicy()) must not re-send a whole
// non-frozen list assignment whose value it cannot see as a list — a gocql.NamedValue
// holding a slice, a []byte bound to a list<tinyint> (the drivers marshal it into one).
// The first response is dropped after Cassandra applied it; a re-send would append a
// second copy ([1] → [1, 1]). p runs statements through such a Policy; named is the
// driver's NamedValue. s0 reads Cassandra directly; px is p's session's proxy.
func DefaultPolicyLists(t *testing.T, s0 *gocql.Session, px *faultproxy.Proxy, p Policy, named func(string, any) any) {
	t.Helper()
	if err := s0.Query(`CREATE TABLE plain_lists (id int PRIMARY KEY, l list<int>, b list<tinyint>)`).Exec(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i, c := range []struct {
		name, stmt string
		args       func(id int) []any
		col        string
	}{
		{"named value", `UPDATE plain_lists SET l = :l WHERE id = :id`, func(id int) []any { return []any{named("l", []int{1}), named("id", id)} }, "l"},
		{"[]byte into list<tinyint>", `UPDATE plain_lists SET b = ? WHERE id = ?`, func(id int) []any { return []any{[]byte{1}, id} }, "b"},
	} {
		px.SetRule(nil)
		if err := p.Exec(ctx, c.stmt, c.args(100+i)...); err != nil {
			t.Fatalf("%s, warm-up: %v", c.name, err)
		}
		px.SetRule(faultproxy.DropNext(1, func(r faultproxy.Request) bool {
			return r.IsWrite() && strings.Contains(r.CQL, "plain_lists")
		}))
		err := p.Exec(ctx, c.stmt, c.args(i)...)
		px.SetRule(nil)
		var n int
		if qerr := s0.Query(fmt.Sprintf(`SELECT %s FROM plain_lists WHERE id = ?`, c.col), i).Scan(listLen(&n)); qerr != nil {
			t.Fatal(qerr)
		}
		if n != 1 {
			t.Errorf("%s: the list holds %d elements after a dropped response (err %v); want 1 (never re-sent)", c.name, n, err)
		}
		if unknown, _ := p.Unknown(err); !unknown {
			t.Errorf("%s: err = %v; want the outcome-unknown error", c.name, err)
		}
	}
}

// listLen scans a list column of any element type into its length.
func listLen(n *int) gocql.Unmarshaler { return lenOf{n} }

type lenOf struct{ n *int }

func (l lenOf) UnmarshalCQL(info gocql.TypeInfo, data []byte) error {
	*l.n = 0
	if len(data) >= 4 {
		*l.n = int(int32(uint32(data[0])<<24 | uint32(data[1])<<16 | uint32(data[2])<<8 | uint32(data[3])))
	}
	return nil
}
