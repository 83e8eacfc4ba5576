package retry

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

func TestOutboxRoundTripAndTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox")
	o, err := OpenOutbox(path)
	if err != nil {
		t.Fatal(err)
	}
	uuid := gocql.MustRandomUUID()
	when := time.Date(2026, 11, 21, 1, 2, 3, 4000, time.UTC)
	values := []any{nil, gocql.UnsetValue, true, "s", []byte{1, 2}, 7, int8(-8), int16(16), int32(-32), int64(1 << 40),
		uint8(8), uint16(16), uint32(32), uint64(1 << 63), float32(1.5), 2.25, when, 3 * time.Second, uuid}
	in := []*OutcomeUnknownError{
		{Statements: []Statement{{CQL: "INSERT INTO t (a) VALUES (?)", Values: values}}, Timestamp: 111, Idempotent: true, Err: gocql.ErrTimeoutNoResponse},
		{Statements: []Statement{{CQL: "INSERT INTO a (k) VALUES (?)", Values: []any{1}}, {CQL: "INSERT INTO b (k) VALUES (?)", Values: []any{2}}}, Batch: true, Timestamp: 222, Idempotent: true},
	}
	for _, e := range in {
		if err := o.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.Append(&OutcomeUnknownError{Idempotent: false}); !errors.Is(err, ErrNotIdempotent) {
		t.Fatalf("non-idempotent append: %v", err)
	}
	if err := o.Append(&OutcomeUnknownError{Idempotent: true, Statements: []Statement{{CQL: "x", Values: []any{struct{}{}}}}}); !errors.Is(err, ErrOutboxValue) {
		t.Fatalf("unsupported value: %v", err)
	}
	o.Close()

	// A crash mid-append: half a record at the end.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte{0, 0, 1, 0, 9, 9, 9})
	f.Close()

	o, err = OpenOutbox(path)
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
