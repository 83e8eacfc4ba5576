package retry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// Review of issues 15 and 19: each test states a finding and fails on the current code.

// TestReview19EarlierAttemptMayHaveApplied: an idempotent write whose first attempt
// timed out (it may have applied) and whose last attempt got Unavailable (that attempt
// applied nothing) is returned as the bare Unavailable error — which the package
// documents as "nothing was applied" — instead of an *OutcomeUnknownError, and never
// reaches the outbox. The outcome must account for every attempt, not the last.
func TestReview19EarlierAttemptMayHaveApplied(t *testing.T) {
	rec := &countingRecorder{}
	p := NewPolicy(WithMaxAttempts(2), WithBackoff(time.Microsecond, time.Microsecond), WithoutJitter(), WithOutbox(rec))
	e, st := execution(p, true)
	if !fail(e, &gocql.RequestErrWriteTimeout{WriteType: "SIMPLE"}) {
		t.Fatal("first attempt (write timeout, idempotent): not retried")
	}
	last := &gocql.RequestErrUnavailable{}
	if fail(e, last) {
		t.Fatal("second attempt: retried past max attempts")
	}
	out := p.outcome(last, st.verdict, 7, st, false, gocql.UnloggedBatch, []Statement{{CQL: "INSERT …"}})
	if !errors.Is(out, ErrOutcomeUnknown) {
		t.Errorf("outcome = %v (class %v: \"nothing was written\"), want an *OutcomeUnknownError: attempt 1 may have applied", out, ClassifyError(out))
	}
	if rec.n != 1 {
		t.Errorf("outbox appends = %d, want 1", rec.n)
	}
}

type countingRecorder struct{ n int }

func (r *countingRecorder) Append(*OutcomeUnknownError) error { r.n++; return nil }

// TestReview19OverloadedIsNoProofForLoggedBatch: Cassandra (StorageProxy.mutateAtomically
// → syncWriteToBatchlog, then syncWriteBatchedMutations → sendToHintedReplicas →
// checkHintOverload) can throw OverloadedException after the batch is stored in the batch
// log; the batchlog entry is then never removed and BatchlogManager replays it. The same
// check runs per mutation in StorageProxy.mutate, so an unlogged/counter batch over
// several partitions gets Overloaded (or Unavailable, from ReplicaPlans.forWrite /
// findSuitableReplica) after earlier mutations were sent. "Nothing applied" only holds
// for a single mutation; a non-idempotent multi-mutation write must not be re-sent.
func TestReview19OverloadedIsNoProofForLoggedBatch(t *testing.T) {
	p := NewPolicy(WithBackoff(time.Microsecond, time.Microsecond), WithoutJitter())
	for _, tc := range []struct {
		typ  gocql.BatchType
		stmt string
		errs []error
	}{
		// Logged: every Unavailable check runs before the batch-log write, Overloaded
		// can come after it.
		{gocql.LoggedBatch, `UPDATE ks.l SET items = items + [1] WHERE id = ?`, []error{reqErr{gocql.ErrCodeOverloaded}}},
		// Counter (and unlogged): mutations are sent one by one; the next one's
		// Unavailable or Overloaded comes after the earlier ones were sent.
		{gocql.CounterBatch, `UPDATE ks.c SET n = n + 1 WHERE id = ?`, []error{reqErr{gocql.ErrCodeOverloaded}, &gocql.RequestErrUnavailable{}}},
	} {
		b := gocql.NewBatch(tc.typ) //nolint:staticcheck // no session needed to build one
		b.Query(tc.stmt, 1)
		b.Query(tc.stmt, 2)
		pb, err := p.pinBatch(context.Background(), nil, b, execConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if pb.verdict.Idempotent {
			t.Fatalf("%v batch judged idempotent", tc.typ)
		}
		for _, err := range tc.errs {
			e := execPolicy{p: p, st: &execState{ctx: context.Background(), verdict: pb.verdict, trace: nopTrace{}}}
			if fail(e, err) {
				t.Errorf("non-idempotent batch type %v over two partitions, %T %v: re-sent (it may be in the batch log / partly applied)", tc.typ, err, err)
			}
		}
	}
}

// TestReview19CDCIsRethrown: issue 15 asks for CDC to be rethrown (the commit log's CDC
// space is full: a retry within the backoff cannot help); the table retries an
// idempotent write after a write timeout of type CDC and after CDC_WRITE_FAILURE.
func TestReview19CDCIsRethrown(t *testing.T) {
	p := NewPolicy(WithBackoff(time.Microsecond, time.Microsecond), WithoutJitter())
	for _, err := range []error{&gocql.RequestErrWriteTimeout{WriteType: "CDC"}, reqErr{gocql.ErrCodeCDCWriteFailure}} {
		e, _ := execution(p, true)
		if fail(e, err) {
			t.Errorf("%v: retried, want rethrown (issue 15: CDC: rethrow)", err)
		}
	}
}
