package outbox

import (
	"bytes"
	"context"
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
	recs, _, err := o.Snapshot()
	if err != nil || len(recs) != 4 {
		t.Fatalf("%d records kept, %v; want the 4 refused", len(recs), err)
	}
}

// sendAll adapts a sender that ignores TTLs to applyFunc.
func sendAll(f func(context.Context, *retry.OutcomeUnknownError, gocql.BatchType) error) applyFunc {
	return func(ctx context.Context, e *retry.OutcomeUnknownError, typ gocql.BatchType) (ttlNote, error) {
		return ttlNoTTL, f(ctx, e, typ)
	}
}
