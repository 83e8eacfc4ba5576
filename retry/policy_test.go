package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// execution simulates one pinned execution: its per-execution policy and state.
func execution(p *Policy, idempotent bool) (execPolicy, *execState) {
	st := p.eng.NewExec(context.Background(), Verdict{Idempotent: idempotent, Writes: true}, "INSERT …")
	return execPolicy{st: st}, st
}

// fail runs gocql's side of a failed attempt: Attempt, then GetRetryType with the error.
// It reports whether the policy retries.
func fail(e execPolicy, err error) bool {
	return e.Attempt(nil) && e.GetRetryType(err) != gocql.Rethrow
}

type reqErr struct{ code int }

func (e reqErr) Code() int       { return e.code }
func (e reqErr) Message() string { return fmt.Sprintf("code %#x", e.code) }
func (e reqErr) Error() string   { return e.Message() }

func TestRetryClassifyError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want ErrorClass
	}{
		{nil, ClassNone},
		{&gocql.RequestErrUnavailable{}, ClassUnavailable},
		{reqErr{gocql.ErrCodeUnavailable}, ClassUnavailable},
		{reqErr{gocql.ErrCodeOverloaded}, ClassOverloaded},
		{reqErr{gocql.ErrCodeBootstrapping}, ClassBootstrapping},
		{&gocql.RequestErrReadTimeout{}, ClassReadTimeout},
		{&gocql.RequestErrWriteTimeout{}, ClassWriteTimeout},
		{reqErr{gocql.ErrCodeWriteTimeout}, ClassWriteTimeout},
		{reqErr{gocql.ErrCodeCASWriteUnknown}, ClassWriteTimeout},
		{&gocql.RequestErrWriteFailure{}, ClassWriteFailure},
		{&gocql.RequestErrReadFailure{}, ClassReadFailure},
		{reqErr{gocql.ErrCodeSyntax}, ClassFatal},
		{reqErr{gocql.ErrCodeInvalid}, ClassFatal},
		{reqErr{gocql.ErrCodeUnauthorized}, ClassFatal},
		{&gocql.RequestErrAlreadyExists{}, ClassFatal},
		{gocql.ErrTimeoutNoResponse, ClassClientTimeout},
		{fmt.Errorf("wrapped: %w", gocql.ErrTimeoutNoResponse), ClassClientTimeout},
		{gocql.ErrConnectionClosed, ClassConnection},
		{io.EOF, ClassConnection},
		{&net.OpError{Op: "read", Err: syscall.ECONNRESET}, ClassConnection},
		{gocql.ErrNoConnections, ClassNoHost},
		{context.Canceled, ClassCanceled},
		{context.DeadlineExceeded, ClassCanceled},
		{errors.New("application error"), ClassFatal},
		{&OutcomeUnknownError{Err: gocql.ErrTimeoutNoResponse}, ClassClientTimeout},
	} {
		if got := ClassifyError(tc.err); got != tc.want {
			t.Errorf("ClassifyError(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestRetryDecisions: every error class × idempotence, through the per-execution
// policy Exec uses (decide is the one decision function).
func TestRetryDecisions(t *testing.T) {
	p := NewPolicy(WithBackoff(time.Microsecond, time.Microsecond), WithoutJitter())
	for _, tc := range []struct {
		err          error
		idempotent   bool // retried when idempotent
		nonIdem      bool // retried even when not idempotent: nothing was applied
		where        gocql.RetryType
		unknownWrite bool // a write that failed so may have applied
	}{
		{&gocql.RequestErrUnavailable{}, true, true, gocql.Retry, false},
		{reqErr{gocql.ErrCodeOverloaded}, true, true, gocql.RetryNextHost, false},
		{reqErr{gocql.ErrCodeBootstrapping}, true, true, gocql.RetryNextHost, false},
		{gocql.ErrNoConnections, true, true, gocql.RetryNextHost, false},
		{&gocql.RequestErrWriteTimeout{WriteType: "BATCH_LOG"}, true, false, gocql.Retry, true},
		{&gocql.RequestErrWriteTimeout{WriteType: "BATCH"}, false, false, gocql.Rethrow, false},
		{&gocql.RequestErrReadTimeout{}, true, false, gocql.Retry, false},
		{&gocql.RequestErrWriteTimeout{WriteType: "SIMPLE"}, true, false, gocql.Retry, true},
		{&gocql.RequestErrWriteFailure{}, true, false, gocql.Retry, true},
		{gocql.ErrTimeoutNoResponse, true, false, gocql.Retry, true},
		{gocql.ErrConnectionClosed, true, false, gocql.Retry, true},
		{&gocql.RequestErrReadFailure{}, false, false, gocql.Rethrow, false},
		{reqErr{gocql.ErrCodeSyntax}, false, false, gocql.Rethrow, false},
		{reqErr{gocql.ErrCodeInvalid}, false, false, gocql.Rethrow, false},
		{reqErr{gocql.ErrCodeUnauthorized}, false, false, gocql.Rethrow, false},
		{context.Canceled, false, false, gocql.Rethrow, true},
	} {
		for _, idem := range []bool{true, false} {
			e, _ := execution(p, idem)
			got := fail(e, tc.err)
			want := tc.nonIdem || (idem && tc.idempotent)
			if got != want {
				t.Errorf("%v, idempotent=%v: retried = %v, want %v", tc.err, idem, got, want)
			}
			if got {
				if where := e.GetRetryType(tc.err); where != tc.where {
					t.Errorf("%v: retry type %v, want %v", tc.err, where, tc.where)
				}
			}
			_, st := execution(p, idem)
			out := p.outcome(tc.err, 7, st, false, gocql.UnloggedBatch, "", nil)
			if facts(tc.err).BatchLogged {
				if !errors.Is(out, ErrBatchLogged) {
					t.Errorf("%v: outcome %v, want ErrBatchLogged", tc.err, out)
				}
			} else if isUnknown := errors.Is(out, ErrOutcomeUnknown); isUnknown != tc.unknownWrite {
				t.Errorf("%v: outcome unknown = %v, want %v", tc.err, isUnknown, tc.unknownWrite)
			}
		}
	}
}

// TestRetryClusterPolicyNeverRetriesUnpinnedWrites: set on a cluster, the Policy sees
// statements it did not pin; gocql would re-send a write with a fresh timestamp.
func TestRetryClusterPolicyNeverRetriesUnpinnedWrites(t *testing.T) {
	p := NewPolicy(WithBackoff(time.Microsecond, time.Microsecond))
	for _, tc := range []struct {
		stmt string
		want bool
	}{
		{"SELECT * FROM t WHERE id = ?", true},
		{"INSERT INTO t (id, v) VALUES (?, ?)", false},
		{"UPDATE c SET n = n + 1 WHERE id = ?", false},
	} {
		q := (&gocql.Session{}).Query(tc.stmt, 1).Idempotent(true)
		if got := p.Attempt(q); got != tc.want {
			t.Errorf("%s: Attempt = %v, want %v", tc.stmt, got, tc.want)
		}
	}
	if p.GetRetryType(reqErr{gocql.ErrCodeSyntax}) != gocql.Rethrow {
		t.Error("a syntax error is not rethrown")
	}
}

func TestRetryBoundedAttempts(t *testing.T) {
	p := NewPolicy(WithMaxAttempts(3), WithBackoff(time.Microsecond, time.Microsecond))
	e, _ := execution(p, true)
	var allowed int
	for i := 0; i < 10; i++ {
		if !fail(e, gocql.ErrTimeoutNoResponse) {
			break
		}
		allowed++
	}
	if allowed != 2 { // 3 attempts: the first and two retries
		t.Fatalf("retries allowed = %d, want 2", allowed)
	}
}

func TestRetryBackoff(t *testing.T) {
	p := NewPolicy(WithBackoff(10*time.Millisecond, 50*time.Millisecond), WithoutJitter())
	want := []time.Duration{10, 20, 40, 50, 50}
	for i, w := range want {
		if got := p.delay(i + 1); got != w*time.Millisecond {
			t.Errorf("delay(%d) = %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
	pj := NewPolicy(WithBackoff(10*time.Millisecond, 50*time.Millisecond))
	for i := 0; i < 100; i++ {
		if d := pj.delay(3); d < 0 || d > 40*time.Millisecond {
			t.Fatalf("jittered delay %v outside [0, 40ms]", d)
		}
	}
}

func TestRetryWaitStopsWhenContextDone(t *testing.T) {
	p := NewPolicy(WithBackoff(time.Hour, time.Hour), WithoutJitter())
	e, st := execution(p, true)
	ctx, cancel := context.WithCancel(context.Background())
	st.Ctx = ctx
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	start := time.Now()
	if fail(e, gocql.ErrTimeoutNoResponse) {
		t.Fatal("retried after the context was cancelled")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("backoff wait did not end with the context")
	}
}

func TestRetryObserverEvents(t *testing.T) {
	var events []Event
	p := NewPolicy(WithObserver(func(e Event) { events = append(events, e) }),
		WithBackoff(time.Microsecond, time.Microsecond), WithMaxAttempts(2))
	e, _ := execution(p, true)
	fail(e, gocql.ErrTimeoutNoResponse)
	fail(e, gocql.ErrTimeoutNoResponse)
	ne, _ := execution(p, false)
	fail(ne, gocql.ErrTimeoutNoResponse)
	if len(events) != 3 || !events[0].Retrying || events[1].Retrying || events[1].Why != "attempts exhausted" ||
		events[2].Why != "not idempotent" || events[0].Class != ClassClientTimeout {
		t.Fatalf("events: %+v", events)
	}
}

func TestRetryOutcomeUnknownError(t *testing.T) {
	e := &OutcomeUnknownError{Statements: []Statement{{CQL: "INSERT …", Values: []any{1}}},
		Timestamp: 42, Idempotent: true, Attempts: 4, Err: gocql.ErrTimeoutNoResponse}
	var err error = fmt.Errorf("saving order: %w", e)
	if !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, gocql.ErrTimeoutNoResponse) || errors.Is(err, ErrNotIdempotent) {
		t.Fatal("errors.Is contract broken")
	}
	var ou *OutcomeUnknownError
	if !errors.As(err, &ou) || ou.Timestamp != 42 {
		t.Fatal("errors.As lost the timestamp")
	}
	e.Idempotent = false
	if !errors.Is(err, ErrNotIdempotent) {
		t.Fatal("non-idempotent outcome does not match ErrNotIdempotent")
	}
}

func TestRetryDoDoesNotRetryApplicationErrors(t *testing.T) {
	calls := 0
	appErr := errors.New("insufficient funds")
	err := Do(context.Background(), func(ctx context.Context) error { calls++; return appErr })
	if !errors.Is(err, appErr) || calls != 1 {
		t.Fatalf("Do: err %v after %d calls, want the app error after 1", err, calls)
	}
	if err := Do(context.Background(), nil); err == nil {
		t.Fatal("Do(nil) did not fail")
	}
}

type recordingTracer struct{ begun, attempts, ended int }
type recordingTrace struct{ t *recordingTracer }

func (r *recordingTracer) Begin(ctx context.Context, x Execution) (context.Context, Trace) {
	r.begun++
	return ctx, recordingTrace{r}
}
func (r recordingTrace) Attempt(Event)  { r.t.attempts++ }
func (r recordingTrace) End(error, int) { r.t.ended++ }

// TestRetryTracerSeesDo: one Begin and one End per Do, whatever fn returns.
func TestRetryTracerSeesDo(t *testing.T) {
	tr := &recordingTracer{}
	appErr := errors.New("application error")
	err := Do(context.Background(), func(ctx context.Context) error { return appErr }, WithTracer(tr))
	if !errors.Is(err, appErr) || tr.begun != 1 || tr.ended != 1 || tr.attempts != 1 {
		t.Fatalf("err %v, tracer %+v: want one begin, one attempt, one end", err, *tr)
	}
}

// Review of issues 15 and 19: each test states a finding and fails on the current code.

// TestRetryEarlierAttemptMayHaveApplied: an idempotent write whose first attempt
// timed out (it may have applied) and whose last attempt got Unavailable (that attempt
// applied nothing) is returned as the bare Unavailable error — which the package
// documents as "nothing was applied" — instead of an *OutcomeUnknownError, and never
// reaches the outbox. The outcome must account for every attempt, not the last.
func TestRetryEarlierAttemptMayHaveApplied(t *testing.T) {
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
	out := p.outcome(last, 7, st, false, gocql.UnloggedBatch, "", []Statement{{CQL: "INSERT …"}})
	if !errors.Is(out, ErrOutcomeUnknown) {
		t.Errorf("outcome = %v (class %v: \"nothing was written\"), want an *OutcomeUnknownError: attempt 1 may have applied", out, ClassifyError(out))
	}
	if rec.n != 1 {
		t.Errorf("outbox appends = %d, want 1", rec.n)
	}
}

type countingRecorder struct{ n int }

func (r *countingRecorder) Append(*OutcomeUnknownError) error { r.n++; return nil }

// TestRetryOverloadedIsNoProofForLoggedBatch: Cassandra (StorageProxy.mutateAtomically
// → syncWriteToBatchlog, then syncWriteBatchedMutations → sendToHintedReplicas →
// checkHintOverload) can throw OverloadedException after the batch is stored in the batch
// log; the batchlog entry is then never removed and BatchlogManager replays it. The same
// check runs per mutation in StorageProxy.mutate, so an unlogged/counter batch over
// several partitions gets Overloaded (or Unavailable, from ReplicaPlans.forWrite /
// findSuitableReplica) after earlier mutations were sent. "Nothing applied" only holds
// for a single mutation; a non-idempotent multi-mutation write must not be re-sent.
func TestRetryOverloadedIsNoProofForLoggedBatch(t *testing.T) {
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
		b := new(gocql.Session).NewBatch(tc.typ)
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
			e := execPolicy{st: p.eng.NewExec(context.Background(), pb.verdict, "")}
			if fail(e, err) {
				t.Errorf("non-idempotent batch type %v over two partitions, %T %v: re-sent (it may be in the batch log / partly applied)", tc.typ, err, err)
			}
		}
	}
}

// TestRetryCDCIsRethrown: issue 15 asks for CDC to be rethrown (the commit log's CDC
// space is full: a retry within the backoff cannot help); the table retries an
// idempotent write after a write timeout of type CDC and after CDC_WRITE_FAILURE.
func TestRetryCDCIsRethrown(t *testing.T) {
	p := NewPolicy(WithBackoff(time.Microsecond, time.Microsecond), WithoutJitter())
	for _, err := range []error{&gocql.RequestErrWriteTimeout{WriteType: "CDC"}, reqErr{gocql.ErrCodeCDCWriteFailure}} {
		e, _ := execution(p, true)
		if fail(e, err) {
			t.Errorf("%v: retried, want rethrown (issue 15: CDC: rethrow)", err)
		}
	}
}

// TestRetryClassifyConnectionTornDown: the errors gocql v1.7 hands every request in
// flight on a connection it closes — too many timeouts, a failed heartbeat, a response
// frame it cannot read — may follow a written request: ClassConnection, not fatal.
func TestRetryClassifyConnectionTornDown(t *testing.T) {
	for _, err := range []error{
		gocql.ErrTooManyTimeouts,
		fmt.Errorf("gocql: heartbeat failed"),
		fmt.Errorf("gocql: unsupported protocol response version: %d", 15),
		gocql.NewErrProtocol("Unknown type in response to execute query (%T): %s", 1, "x"),
	} {
		if c := ClassifyError(err); c != ClassConnection || !c.MayHaveApplied() {
			t.Errorf("ClassifyError(%v) = %v, want connection (may have applied)", err, c)
		}
	}
	if c := ClassifyError(fmt.Errorf("can not marshal string into int")); c != ClassFatal {
		t.Errorf("a marshal error: %v, want fatal (nothing sent)", c)
	}
}
