package outbox

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/retry"
)

func TestOutboxRoundTripAndTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox")
	o, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	uuid := gocql.MustRandomUUID()
	when := time.Date(2026, 11, 21, 1, 2, 3, 4000, time.UTC)
	values := []any{nil, gocql.UnsetValue, true, "s", []byte{1, 2}, 7, int8(-8), int16(16), int32(-32), int64(1 << 40),
		uint8(8), uint16(16), uint32(32), uint64(1 << 63), float32(1.5), 2.25, when, 3 * time.Second, uuid}
	in := []*retry.OutcomeUnknownError{
		{Statements: []retry.Statement{{CQL: "INSERT INTO t (a) VALUES (?)", Values: values}}, Timestamp: 111, Idempotent: true, Err: gocql.ErrTimeoutNoResponse},
		{Statements: []retry.Statement{{CQL: "INSERT INTO a (k) VALUES (?)", Values: []any{1}}, {CQL: "INSERT INTO b (k) VALUES (?)", Values: []any{2}}}, Batch: true, Timestamp: 222, Idempotent: true},
	}
	for _, e := range in {
		if err := o.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.Append(&retry.OutcomeUnknownError{Idempotent: false}); !errors.Is(err, retry.ErrNotIdempotent) {
		t.Fatalf("non-idempotent append: %v", err)
	}
	if err := o.Append(&retry.OutcomeUnknownError{Idempotent: true, Timestamp: 1, Statements: []retry.Statement{{CQL: "INSERT INTO t (a) VALUES (?)", Values: []any{struct{}{}}}}}); !errors.Is(err, ErrValue) {
		t.Fatalf("unsupported value: %v", err)
	}
	o.Close()

	// A crash mid-append: half a record at the end.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte{0, 0, 1, 0, 9, 9, 9})
	f.Close()

	o, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	got, err := o.Pending()
	if err != nil || len(got) != 2 {
		t.Fatalf("Pending = %d records, %v; want 2", len(got), err)
	}
	if got[0].Timestamp != 111 || !reflect.DeepEqual(got[0].Statements[0].Values, values) {
		t.Fatalf("record 1 values:\n got %#v\nwant %#v", got[0].Statements[0].Values, values)
	}
	if !got[1].Batch || got[1].Timestamp != 222 || len(got[1].Statements) != 2 {
		t.Fatalf("record 2: %+v", got[1])
	}
	// Appending after a cut tail lands on a clean boundary.
	if err := o.Append(in[0]); err != nil {
		t.Fatal(err)
	}
	if got, _ := o.Pending(); len(got) != 3 {
		t.Fatalf("after append past torn tail: %d records", len(got))
	}
}

func openTestOutbox(t *testing.T) (*Outbox, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "outbox")
	o, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o, path
}

func kvWrite(id int, ts int64) *retry.OutcomeUnknownError {
	return &retry.OutcomeUnknownError{Statements: []retry.Statement{{CQL: "INSERT INTO kv (id) VALUES (?)", Values: []any{id}}},
		Timestamp: ts, Idempotent: true}
}

func pendingTimestamps(t *testing.T, o *Outbox) []int64 {
	t.Helper()
	got, err := o.Pending()
	if err != nil {
		t.Fatal(err)
	}
	var ts []int64
	for _, e := range got {
		ts = append(ts, e.Timestamp)
	}
	return ts
}

// TestOutboxAppendRefusesNonIdempotent: Append stores nothing marked not idempotent,
// nor a COUNTER batch however it is marked.
func TestOutboxAppendRefusesNonIdempotent(t *testing.T) {
	o, _ := openTestOutbox(t)
	for _, e := range []*retry.OutcomeUnknownError{
		{Statements: []retry.Statement{{CQL: "UPDATE t SET l = l + [1] WHERE k = 1"}}, Timestamp: 1},
		{Batch: true, BatchType: gocql.UnloggedBatch, Timestamp: 1,
			Statements: []retry.Statement{{CQL: "INSERT INTO a (k) VALUES (1)"}, {CQL: "UPDATE t SET l = [1, 2] WHERE k = 1"}}},
		{Batch: true, BatchType: gocql.CounterBatch, Timestamp: 1, Idempotent: true,
			Statements: []retry.Statement{{CQL: "UPDATE c SET n = n + 1 WHERE k = 1"}}},
	} {
		if err := o.Append(e); !errors.Is(err, retry.ErrNotIdempotent) {
			t.Errorf("append %+v: %v, want retry.ErrNotIdempotent", e, err)
		}
	}
	// Nor a write without its pinned timestamp: replayed, it would be stamped anew.
	if err := o.Append(kvWrite(1, 0)); err == nil {
		t.Error("append without a timestamp stored")
	}
	if got := pendingTimestamps(t, o); len(got) != 0 {
		t.Fatalf("%d records stored", len(got))
	}
}

// TestOutboxLocked: one Outbox per file, across processes too (flock), released by
// Close.
func TestOutboxLocked(t *testing.T) {
	if !outboxLocks {
		t.Skip("no flock on this platform")
	}
	o, path := openTestOutbox(t)
	if o2, err := Open(path); !errors.Is(err, ErrLocked) {
		if o2 != nil {
			o2.Close()
		}
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	o.Close()
	o2, err := Open(path)
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	o2.Close()
}
