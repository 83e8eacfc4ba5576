package outbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sync"
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

// TestOutboxReplayKeepsConcurrentAppends: records appended while Replay re-sends a
// snapshot survive it, whether appended from inside the replay (deterministic) or by
// goroutines racing it (run with -race); replayed records are removed.
func TestOutboxReplayKeepsConcurrentAppends(t *testing.T) {
	o, _ := openTestOutbox(t)
	for i := 1; i <= 20; i++ {
		if err := o.Append(kvWrite(i, int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	const writers, each = 4, 25
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			<-start
			for i := 0; i < each; i++ {
				if err := o.Append(kvWrite(0, int64(1000*(w+1)+i))); err != nil {
					t.Error(err)
				}
			}
		}(w)
	}
	var sent []int64
	n, err := o.replay(context.Background(), nil, sendAll(func(_ context.Context, e *retry.OutcomeUnknownError, _ gocql.BatchType) error {
		if e.Timestamp == 1 {
			if err := o.Append(kvWrite(0, 999)); err != nil { // between snapshot and clean-up
				return err
			}
			close(start)
		}
		sent = append(sent, e.Timestamp)
		time.Sleep(time.Millisecond)
		return nil
	}))
	wg.Wait()
	if err != nil || n != 20 || len(sent) != 20 {
		t.Fatalf("replay = %d (sent %d), %v; want 20", n, len(sent), err)
	}
	got := pendingTimestamps(t, o)
	want := map[int64]bool{999: true}
	for w := 0; w < writers; w++ {
		for i := 0; i < each; i++ {
			want[int64(1000*(w+1)+i)] = true
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d records pending after replay, want the %d appended during it", len(got), len(want))
	}
	for _, ts := range got {
		if !want[ts] {
			t.Fatalf("record %d pending after it was replayed", ts)
		}
		delete(want, ts)
	}
	// The rewritten file is the one appends now go to, and survives a reopen.
	if err := o.Append(kvWrite(0, 5000)); err != nil {
		t.Fatal(err)
	}
	if got := pendingTimestamps(t, o); len(got) != 1+writers*each+1 || got[len(got)-1] != 5000 {
		t.Fatalf("after a later append: %d records, last %v", len(got), got[len(got)-1])
	}
}

// TestOutboxReplayStopsOnFailure: a failed write stops the replay and keeps it and the
// rest; the records before it are removed.
func TestOutboxReplayStopsOnFailure(t *testing.T) {
	o, _ := openTestOutbox(t)
	for i := 1; i <= 4; i++ {
		if err := o.Append(kvWrite(i, int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	boom := errors.New("boom")
	n, err := o.replay(context.Background(), nil, sendAll(func(_ context.Context, e *retry.OutcomeUnknownError, _ gocql.BatchType) error {
		if e.Timestamp == 3 {
			return boom
		}
		return nil
	}))
	if n != 2 || !errors.Is(err, boom) {
		t.Fatalf("replay = %d, %v; want 2 and boom", n, err)
	}
	if got := pendingTimestamps(t, o); !reflect.DeepEqual(got, []int64{3, 4}) {
		t.Fatalf("pending = %v, want [3 4]", got)
	}
}

// TestOutboxBatchType: a batch record carries its type; records from before the type
// was stored decode as LOGGED; a COUNTER batch record is never replayed.
func TestOutboxBatchType(t *testing.T) {
	o, path := openTestOutbox(t)
	batch := &retry.OutcomeUnknownError{Batch: true, Timestamp: 5, Idempotent: true, Statements: []retry.Statement{
		{CQL: "INSERT INTO a (k) VALUES (?)", Values: []any{1}}, {CQL: "INSERT INTO b (k) VALUES (?)", Values: []any{2}}}}
	if err := o.Append(batch); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(`"type":"logged"`)) {
		t.Fatalf("batch record has no batch type: %s", raw[8:])
	}
	unlogged := *batch
	unlogged.BatchType = gocql.UnloggedBatch
	if err := o.Append(&unlogged); err != nil {
		t.Fatal(err)
	}
	got, err := o.Pending()
	if err != nil || len(got) != 2 || got[0].BatchType != gocql.LoggedBatch || got[1].BatchType != gocql.UnloggedBatch {
		t.Fatalf("pending: %v; want a logged then an unlogged batch", err)
	}
	for _, c := range []struct {
		payload string
		want    gocql.BatchType
	}{
		{`{"batch":true,"ts":1,"stmts":[{"cql":"INSERT INTO a (k) VALUES (1)"}]}`, gocql.LoggedBatch}, // old format
		{`{"batch":true,"type":"logged","ts":1,"stmts":[{"cql":"INSERT INTO a (k) VALUES (1)"}]}`, gocql.LoggedBatch},
		{`{"batch":true,"type":"unlogged","ts":1,"stmts":[{"cql":"INSERT INTO a (k) VALUES (1)"}]}`, gocql.UnloggedBatch},
		{`{"batch":true,"type":"counter","ts":1,"stmts":[{"cql":"UPDATE c SET n = n + 1 WHERE k = 1"}]}`, gocql.CounterBatch},
	} {
		e, typ, err := decodeRecord([]byte(c.payload))
		if err != nil || typ != c.want || !e.Batch {
			t.Errorf("%s: type %v, %v; want %v", c.payload, typ, err, c.want)
		}
	}
	if _, _, err := decodeRecord([]byte(`{"batch":true,"type":"sideways","ts":1,"stmts":[]}`)); err == nil {
		t.Error("unknown batch type decoded")
	}
}

// TestOutboxReplayRefuses: records that are unsafe or unreadable are never handed to
// the sender; they stay pending and the error says why, and the replay goes on.
func TestOutboxReplayRefuses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox")
	var file []byte
	for _, p := range []string{
		`{"batch":true,"type":"counter","ts":1,"stmts":[{"cql":"UPDATE c SET n = n + 1 WHERE k = 1"}]}`,
		`{"ts":2,"stmts":[]}`,                                // nothing to send
		`{"stmts":[{"cql":"INSERT INTO a (k) VALUES (0)"}]}`, // no timestamp: would be stamped anew
		`{"ts":3,"stmts":[{"cql":"INSERT INTO a (k) VALUES (?)","values":[{"t":"int8","v":"300"}]}]}`, // out of range
		`{"ts":4,"stmts":[{"cql":"INSERT INTO a (k) VALUES (?)","values":[{"t":"int","v":"4"}]}]}`,
	} {
		file = append(file, frame([]byte(p))...)
	}
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	var sent []int64
	n, err := o.replay(context.Background(), nil, sendAll(func(_ context.Context, e *retry.OutcomeUnknownError, _ gocql.BatchType) error {
		sent = append(sent, e.Timestamp)
		return nil
	}))
	if n != 1 || !reflect.DeepEqual(sent, []int64{4}) || !errors.Is(err, retry.ErrNotIdempotent) {
		t.Fatalf("replay = %d, sent %v, %v; want only record 4 sent and retry.ErrNotIdempotent", n, sent, err)
	}
	recs, _, err := o.snapshot()
	if err != nil || len(recs) != 4 {
		t.Fatalf("%d records kept, %v; want the 4 refused", len(recs), err)
	}
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

// TestOutboxDamage: a torn tail (cut header, cut payload, zero-filled blocks) is cut
// off at open; damage with intact records after it is reported, and the file is left
// as it was.
func TestOutboxDamage(t *testing.T) {
	good := append(frame([]byte(`{"ts":1,"stmts":[{"cql":"INSERT INTO a (k) VALUES (1)"}]}`)),
		frame([]byte(`{"ts":2,"stmts":[{"cql":"INSERT INTO a (k) VALUES (2)"}]}`))...)
	rec3 := frame([]byte(`{"ts":3,"stmts":[{"cql":"INSERT INTO a (k) VALUES (3)"}]}`))
	flipped := append([]byte(nil), rec3...)
	flipped[20] ^= 0x40
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	for _, c := range []struct {
		name    string
		file    []byte
		corrupt bool
	}{
		{"torn header", cat(good, rec3[:5]), false},
		{"torn payload", cat(good, rec3[:len(rec3)-3]), false},
		{"zero-filled last record", cat(good, make([]byte, len(rec3))), false},
		{"zeros to the end", cat(good, make([]byte, 5000)), false},
		{"bad checksum, last record", cat(good, flipped), false},
		{"bad checksum, data after", cat(good, flipped, rec3), true},
		{"garbage, data after", cat(good, []byte("garbage!garbage!"), rec3), true},
		{"garbage length at the end", cat(good, []byte("garbage!garbage!")), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "outbox")
			if err := os.WriteFile(path, c.file, 0o600); err != nil {
				t.Fatal(err)
			}
			o, err := Open(path)
			after, _ := os.ReadFile(path)
			if c.corrupt {
				var ce *CorruptError
				if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || ce.Offset != int64(len(good)) {
					t.Fatalf("open: %v, want corrupt at %d", err, len(good))
				}
				if !bytes.Equal(after, c.file) {
					t.Fatal("open changed a corrupt file")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if got := pendingTimestamps(t, o); !reflect.DeepEqual(got, []int64{1, 2}) || !bytes.Equal(after, good) {
				t.Fatalf("pending %v, file %d bytes; want [1 2] and %d bytes", got, len(after), len(good))
			}
		})
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

func TestOutboxDecodeValueStrict(t *testing.T) {
	for _, v := range []outboxValue{{"int8", "300"}, {"uint8", "-1"}, {"int", "12abc"}, {"bool", "yes"},
		{"float32", "4294967296"}, {"uuid", "nope"}, {"bytes", "!!"}, {"time", "yesterday"}, {"what", ""}} {
		if got, err := decodeValue(v); err == nil {
			t.Errorf("decodeValue(%v) = %v, want an error", v, got)
		}
	}
}

// FuzzOutboxRecord: the reader never panics on any file content, and a record it
// decodes encodes back to the same stored form.
func FuzzOutboxRecord(f *testing.F) {
	f.Add(frame([]byte(`{"ts":1,"stmts":[{"cql":"INSERT INTO a (k, v) VALUES (?, ?)","values":[{"t":"int","v":"1"},{"t":"bytes","v":"AQI="}]}]}`)))
	f.Add(frame([]byte(`{"batch":true,"type":"unlogged","ts":1,"stmts":[{"cql":"x"},{"cql":"y","values":[{"t":"float64","v":"1"},{"t":"unset"},{"t":"null"}]}]}`)))
	f.Add(frame([]byte(`{"ts":1,"stmts":[{"cql":"x","values":[{"t":"time","v":"2026-01-02T03:04:05.5Z"},{"t":"uuid","v":"00000000-0000-0000-0000-000000000000"}]}]}`))[:20])
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4, 5})
	f.Add([]byte(`{"ts":1,"stmts":[{"cql":"x","values":[{"t":"int8","v":"-8"},{"t":"uint64","v":"1"},{"t":"bool","v":"1"},{"t":"duration","v":"3"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, good, _, err := scanRecords(bytes.NewReader(data), int64(len(data)))
		if err != nil || good > int64(len(data)) {
			t.Fatalf("scan: good %d of %d, %v", good, len(data), err)
		}
		for _, r := range recs {
			checkPayload(t, r.payload)
		}
		// The checksum hides payloads from the fuzzer; feed it the payload decoder too.
		checkPayload(t, data)
	})
}

func checkPayload(t *testing.T, payload []byte) {
	e, typ, err := decodeRecord(payload)
	if err != nil {
		return
	}
	_ = replayable(e, typ)
	rec, err := encodeStored(e, typ)
	if err != nil {
		t.Fatalf("decoded record does not encode: %v", err)
	}
	e2, typ2, err := decodeRecord(rec)
	if err != nil || typ2 != typ {
		t.Fatalf("re-decode: %v, type %v want %v", err, typ2, typ)
	}
	if rec2, _ := encodeStored(e2, typ2); !bytes.Equal(rec, rec2) {
		t.Fatalf("round trip changed the record:\n%s\n%s", rec, rec2)
	}
}

// encodeStored encodes a decoded record the way Append stores it, minus Append's checks.
func encodeStored(e *retry.OutcomeUnknownError, typ gocql.BatchType) ([]byte, error) {
	rec := outboxRecord{Batch: e.Batch, Timestamp: e.Timestamp}
	if e.Batch {
		rec.Type = batchTypeName[typ]
	}
	if e.Err != nil {
		rec.Err = e.Err.Error()
	}
	for _, s := range e.Statements {
		st := outboxStmt{CQL: s.CQL}
		for _, v := range s.Values {
			ev, err := encodeValue(v)
			if err != nil {
				return nil, err
			}
			st.Values = append(st.Values, ev)
		}
		rec.Statements = append(rec.Statements, st)
	}
	return json.Marshal(rec)
}

// sendAll adapts a sender that ignores TTLs to applyFunc.
func sendAll(f func(context.Context, *retry.OutcomeUnknownError, gocql.BatchType) error) applyFunc {
	return func(ctx context.Context, e *retry.OutcomeUnknownError, typ gocql.BatchType) (ttlNote, error) {
		return ttlNoTTL, f(ctx, e, typ)
	}
}
