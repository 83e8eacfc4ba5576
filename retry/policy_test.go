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

// fakeQuery stands in for *gocql.Query in the policy's view: gocql's own attempt count
// (which accumulates across executions) and a context carrying this execution's state.
type fakeQuery struct {
	ctx        context.Context
	gocqlCount int
	idempotent bool
	cons       gocql.Consistency
}

func (q *fakeQuery) Attempts() int                      { return q.gocqlCount }
func (q *fakeQuery) SetConsistency(c gocql.Consistency) { q.cons = c }
func (q *fakeQuery) GetConsistency() gocql.Consistency  { return q.cons }
func (q *fakeQuery) Context() context.Context           { return q.ctx }
func (q *fakeQuery) IsIdempotent() bool                 { return q.idempotent }

// execution simulates one execution the way Pin sets it up.
func execution(idempotent bool, gocqlCount int) (*fakeQuery, *execState) {
	st := &execState{statement: "INSERT …"}
	return &fakeQuery{ctx: context.WithValue(context.Background(), stateKey{}, st), idempotent: idempotent, gocqlCount: gocqlCount}, st
}

// fail records a failed attempt as gocql's observer would.
func fail(q *fakeQuery, err error) {
	q.gocqlCount++
	record(q.ctx, err, nil)
}

type reqErr struct{ code int }

func (e reqErr) Code() int       { return e.code }
func (e reqErr) Message() string { return fmt.Sprintf("code %#x", e.code) }
func (e reqErr) Error() string   { return e.Message() }

func TestClassifyError(t *testing.T) {
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

// TestPolicyDecisions: every error class × idempotence.
func TestPolicyDecisions(t *testing.T) {
	p := NewPolicy(WithBackoff(time.Microsecond, time.Microsecond), WithoutJitter())
	for _, tc := range []struct {
		err       error
		retryable bool
		where     gocql.RetryType
	}{
		{&gocql.RequestErrUnavailable{}, true, gocql.RetryNextHost},
		{reqErr{gocql.ErrCodeOverloaded}, true, gocql.RetryNextHost},
		{reqErr{gocql.ErrCodeBootstrapping}, true, gocql.RetryNextHost},
		{&gocql.RequestErrReadTimeout{}, true, gocql.Retry},
		{&gocql.RequestErrWriteTimeout{}, true, gocql.Retry},
		{&gocql.RequestErrWriteFailure{}, true, gocql.Retry},
		{gocql.ErrTimeoutNoResponse, true, gocql.Retry},
		{gocql.ErrConnectionClosed, true, gocql.Retry},
		{&gocql.RequestErrReadFailure{}, false, gocql.Rethrow},
		{reqErr{gocql.ErrCodeSyntax}, false, gocql.Rethrow},
		{reqErr{gocql.ErrCodeInvalid}, false, gocql.Rethrow},
		{reqErr{gocql.ErrCodeUnauthorized}, false, gocql.Rethrow},
		{context.Canceled, false, gocql.Rethrow},
	} {
		for _, idem := range []bool{true, false} {
			q, _ := execution(idem, 0)
			fail(q, tc.err)
			got := p.Attempt(q)
			if want := idem && tc.retryable; got != want {
				t.Errorf("%v, idempotent=%v: Attempt = %v, want %v", tc.err, idem, got, want)
			}
		}
		if got := p.GetRetryType(tc.err); got != tc.where {
			t.Errorf("GetRetryType(%v) = %v, want %v", tc.err, got, tc.where)
		}
	}
}

func TestPolicyBoundedAttempts(t *testing.T) {
	p := NewPolicy(WithMaxAttempts(3), WithBackoff(time.Microsecond, time.Microsecond))
	q, _ := execution(true, 0)
	var allowed int
	for i := 0; i < 10; i++ {
		fail(q, gocql.ErrTimeoutNoResponse)
		if !p.Attempt(q) {
			break
		}
		allowed++
	}
	if allowed != 2 { // 3 attempts: the first and two retries
		t.Fatalf("retries allowed = %d, want 2", allowed)
	}
}

// TestAttemptsDoNotLeakBetweenExecutions is the regression test for gocql's count: a
// reused *gocql.Query keeps accumulating Attempts() across executions, so a policy that
// trusts it stops retrying after the first few failures of a long-lived query.
func TestAttemptsDoNotLeakBetweenExecutions(t *testing.T) {
	p := NewPolicy(WithMaxAttempts(3), WithBackoff(time.Microsecond, time.Microsecond))
	gocqlCount := 0
	for exec := 0; exec < 5; exec++ {
		q, _ := execution(true, gocqlCount)
		fail(q, gocql.ErrTimeoutNoResponse)
		if !p.Attempt(q) {
			t.Fatalf("execution %d: first failure not retried (gocql's count is %d)", exec+1, q.gocqlCount)
		}
		gocqlCount = q.gocqlCount + 1 // the retry succeeded
	}
	// Without per-execution state the policy falls back to gocql's count — and refuses.
	stale := &fakeQuery{ctx: context.Background(), idempotent: true, gocqlCount: gocqlCount}
	if p.Attempt(stale) {
		t.Fatal("fallback: expected gocql's accumulated count to exhaust attempts")
	}
}

func TestBackoff(t *testing.T) {
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

func TestAttemptStopsWhenContextDone(t *testing.T) {
	p := NewPolicy(WithBackoff(time.Hour, time.Hour), WithoutJitter())
	q, _ := execution(true, 0)
	ctx, cancel := context.WithCancel(q.ctx)
	q.ctx = ctx
	fail(q, gocql.ErrTimeoutNoResponse)
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	start := time.Now()
	if p.Attempt(q) {
		t.Fatal("Attempt returned true after the context was cancelled")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("backoff wait did not end with the context")
	}
}

func TestObserverEvents(t *testing.T) {
	var events []Event
	p := NewPolicy(WithObserver(func(e Event) { events = append(events, e) }),
		WithBackoff(time.Microsecond, time.Microsecond), WithMaxAttempts(2))
	q, _ := execution(true, 0)
	fail(q, gocql.ErrTimeoutNoResponse)
	p.Attempt(q)
	fail(q, gocql.ErrTimeoutNoResponse)
	p.Attempt(q)
	nq, _ := execution(false, 0)
	fail(nq, gocql.ErrTimeoutNoResponse)
	p.Attempt(nq)
	if len(events) != 3 || !events[0].Retrying || events[1].Retrying || events[1].Why != "attempts exhausted" ||
		events[2].Why != "not idempotent" || events[0].Class != ClassClientTimeout {
		t.Fatalf("events: %+v", events)
	}
}

func TestOutcomeUnknownError(t *testing.T) {
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

func TestDoDoesNotRetryApplicationErrors(t *testing.T) {
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
