package retry

import (
	"context"
	"errors"
	"fmt"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// customTI is what the v2 driver's metadata holds for a column whose type string it
// cannot parse: unknownTypeInfo (types.go:684), whose Type() is TypeCustom. v2.1.2's
// typeInfoFromString fails on "list<frozen<address>>" ("unknown type address": UDT names
// are not in the type registry), and metadata.go:1007-1011 then stores
// unknownTypeInfo(col.Validator) for the whole column.
type customTI struct{}

func (customTI) Type() gocql.Type                    { return gocql.TypeCustom }
func (customTI) Zero() interface{}                   { return nil }
func (customTI) Marshal(interface{}) ([]byte, error) { return nil, errors.New("x") }
func (customTI) Unmarshal([]byte, interface{}) error { return errors.New("x") }

// udtListSchema answers as sessionSchema would for
// CREATE TABLE t (k int PRIMARY KEY, l list<frozen<address>>).
type udtListSchema struct{}

var udtListCol = &gocql.ColumnMetadata{Name: "l", Kind: gocql.ColumnRegular,
	Validator: "list<frozen<address>>", Type: customTI{}}

func (udtListSchema) ColumnKind(_, _, column string) ColumnKind {
	if column == "l" {
		return kindOf(udtListCol)
	}
	return ColumnScalar
}

type address struct{ Street string }

// A non-frozen list of UDTs is judged a scalar: SET l = ? (and l = l + ?) become
// "repeatable", so a write timeout re-sends them and the list gets a second copy.
func TestListOfUDTIsAList(t *testing.T) {
	if k := kindOf(udtListCol); k != ColumnList {
		t.Errorf("kindOf(list<frozen<address>>) = %v, want ColumnList", k)
	}
	p := NewPolicy(WithSchema(udtListSchema{}))
	for _, cql := range []string{
		`UPDATE t SET l = ? WHERE k = ?`,
		`UPDATE t SET l = l + ? WHERE k = ?`,
	} {
		v := p.Repeatable("ks", cql, []any{[]address{{"a"}}, 1})
		if v.Idempotent {
			t.Errorf("%s with a non-empty list: judged repeatable (%v)", cql, v.Reasons)
		}
	}
}

// ExecBatch is documented as "Exec for a batch on s" but runs the batch on the
// session it was made from (Batch.ExecContext uses b.session): a batch not made by a
// session panics, where v1's s.ExecuteBatch(b) ran it on s.
func TestExecBatchRunsOnS(t *testing.T) {
	s := new(gocql.Session)
	s.Close() // a closed session: executing on it answers ErrSessionClosed
	b := &gocql.Batch{Type: gocql.UnloggedBatch}
	b.Query(`INSERT INTO t (k, v) VALUES (1, 2)`)
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		err = NewPolicy().ExecBatch(context.Background(), s, b)
	}()
	if !errors.Is(err, gocql.ErrSessionClosed) {
		t.Errorf("ExecBatch(ctx, closed s, b) = %v, want ErrSessionClosed (run on s)", err)
	}
}
