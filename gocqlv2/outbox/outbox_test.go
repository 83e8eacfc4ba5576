package outbox

import (
	"errors"
	"math/big"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"gopkg.in/inf.v0"

	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
)

type ownMarshaler struct{}

func (ownMarshaler) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return nil, nil }

// TestV2OutboxRoundTrip: the v2 driver's own value types are stored and come back as
// themselves (UUID, Duration, *inf.Dec, UNSET); a value that marshals itself is refused
// with ErrValue and nothing is written; a COUNTER batch is refused.
func TestV2OutboxRoundTrip(t *testing.T) {
	o, err := Open(filepath.Join(t.TempDir(), "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	u := gocql.TimeUUID()
	values := []any{u, gocql.Duration{Months: 1, Days: 2, Nanoseconds: 3}, inf.NewDecBig(big.NewInt(-1234), 2), gocql.UnsetValue,
		[]gocql.UUID{u}, map[string]any{"f": "x"}, time.Unix(1, 0).UTC()}
	rec := &retry.OutcomeUnknownError{Statements: []retry.Statement{{CQL: `INSERT INTO t (a, b, c, d, e, f, g) VALUES (?, ?, ?, ?, ?, ?, ?)`, Values: values}},
		Timestamp: 42, Idempotent: true, Batch: true, BatchType: gocql.UnloggedBatch}
	if err := o.Append(rec); err != nil {
		t.Fatal(err)
	}
	bad := &retry.OutcomeUnknownError{Statements: []retry.Statement{{CQL: `INSERT INTO t (a) VALUES (?)`, Values: []any{ownMarshaler{}}}}, Timestamp: 1, Idempotent: true}
	if err := o.Append(bad); !errors.Is(err, ErrValue) {
		t.Fatalf("a Marshaler: %v, want ErrValue", err)
	}
	counter := &retry.OutcomeUnknownError{Statements: []retry.Statement{{CQL: `UPDATE c SET n = n + 1 WHERE k = 1`}}, Timestamp: 1, Idempotent: true, Batch: true, BatchType: gocql.CounterBatch}
	if err := o.Append(counter); !errors.Is(err, retry.ErrNotIdempotent) {
		t.Fatalf("a COUNTER batch: %v, want ErrNotIdempotent", err)
	}
	got, err := o.Pending()
	if err != nil || len(got) != 1 {
		t.Fatalf("pending: %d records, %v", len(got), err)
	}
	g := got[0]
	if g.Timestamp != 42 || !g.Batch || g.BatchType != gocql.UnloggedBatch {
		t.Fatalf("record %+v", g)
	}
	want := []any{u, gocql.Duration{Months: 1, Days: 2, Nanoseconds: 3}, inf.NewDecBig(big.NewInt(-1234), 2), gocql.UnsetValue,
		[]any{u}, map[string]any{"f": "x"}, time.Unix(1, 0).UTC()}
	if !reflect.DeepEqual(g.Statements[0].Values, want) {
		t.Fatalf("values %#v\nwant %#v", g.Statements[0].Values, want)
	}
}
