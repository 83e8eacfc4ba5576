package retry

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// execTracer keeps each execution's Begin record.
type execTracer struct {
	mu    sync.Mutex
	execs []Execution
}

func (r *execTracer) Begin(ctx context.Context, x Execution) (context.Context, Trace) {
	r.mu.Lock()
	r.execs = append(r.execs, x)
	r.mu.Unlock()
	return ctx, recordingTrace{&recordingTracer{}}
}

// TestPolicyJudgesAtThePinnedTimestamp: Exec and ExecBatch judge a batch whose list
// write carries its own USING TIMESTAMP against the timestamp they pin — a DELETE of
// the same batch at that timestamp hides the write when it is not below the write's
// (#28 R8). RepeatableAt gives the same verdict; Repeatable, not knowing the timestamp,
// does not drop the reason.
func TestPolicyJudgesAtThePinnedTimestamp(t *testing.T) {
	srv := startRV(t, func(int64) (time.Duration, bool) { return 0, false })
	sess := rvSession(t, srv)
	schema := mapSchema{"t.l": ColumnList}
	const (
		del = "DELETE l FROM ks.t WHERE id = 1"
		app = "UPDATE ks.t USING TIMESTAMP 5000 SET l = l + [1] WHERE id = 1"
	)
	text := "BEGIN UNLOGGED BATCH " + del + "; " + app + " APPLY BATCH"
	for _, tc := range []struct {
		ts   int64
		want bool
	}{{5000, true}, {9000, true}, {4999, false}} {
		tr := &execTracer{}
		p := NewPolicy(WithSchema(schema), WithTracer(tr))
		if err := p.Exec(context.Background(), sess.Query(text), AtTimestamp(tc.ts)); err != nil {
			t.Fatal(err)
		}
		b := sess.NewBatch(gocql.UnloggedBatch)
		b.Query(del)
		b.Query(app)
		if err := p.ExecBatch(context.Background(), sess, b, AtTimestamp(tc.ts)); err != nil {
			t.Fatal(err)
		}
		if len(tr.execs) != 2 {
			t.Fatalf("%d executions traced, want 2", len(tr.execs))
		}
		for _, x := range tr.execs {
			if x.Idempotent != tc.want || x.Timestamp != tc.ts {
				t.Errorf("at %d, batch %v: idempotent %v at %d, want %v (reasons %q)", tc.ts, x.Batch, x.Idempotent, x.Timestamp, tc.want, x.Reasons)
			}
		}
		if got := p.RepeatableAt("ks", text, []any{}, tc.ts).Idempotent; got != tc.want {
			t.Errorf("RepeatableAt(%d) = %v, want %v", tc.ts, got, tc.want)
		}
		if p.Repeatable("ks", text, []any{}).Idempotent {
			t.Errorf("Repeatable without a timestamp judged it repeatable")
		}
	}
}
