package retry

// Review (refactor a6efed9..24681a0): the error classification and the decision table
// moved to internal/core/decision. This file keeps the pre-refactor implementation
// (a6efed9^ retry/errclass.go and retry/decide.go, copied verbatim but renamed) as an
// oracle and compares it with the new code on a table of errors × verdicts.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
)

func oldClassifyError(err error) ErrorClass {
	if err == nil {
		return ClassNone
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ClassCanceled
	}
	var ou *OutcomeUnknownError
	if errors.As(err, &ou) {
		return oldClassifyError(ou.Err)
	}
	var (
		unavailable  *gocql.RequestErrUnavailable
		readTimeout  *gocql.RequestErrReadTimeout
		writeTimeout *gocql.RequestErrWriteTimeout
		writeFailure *gocql.RequestErrWriteFailure
		readFailure  *gocql.RequestErrReadFailure
	)
	switch {
	case errors.As(err, &unavailable):
		return ClassUnavailable
	case errors.As(err, &readTimeout):
		return ClassReadTimeout
	case errors.As(err, &writeTimeout):
		return ClassWriteTimeout
	case errors.As(err, &writeFailure):
		return ClassWriteFailure
	case errors.As(err, &readFailure):
		return ClassReadFailure
	}
	var re gocql.RequestError
	if errors.As(err, &re) {
		switch re.Code() {
		case gocql.ErrCodeUnavailable:
			return ClassUnavailable
		case gocql.ErrCodeOverloaded:
			return ClassOverloaded
		case gocql.ErrCodeBootstrapping:
			return ClassBootstrapping
		case gocql.ErrCodeReadTimeout:
			return ClassReadTimeout
		case gocql.ErrCodeWriteTimeout, gocql.ErrCodeCASWriteUnknown:
			return ClassWriteTimeout
		case gocql.ErrCodeWriteFailure, gocql.ErrCodeCDCWriteFailure:
			return ClassWriteFailure
		case gocql.ErrCodeReadFailure:
			return ClassReadFailure
		}
		return ClassFatal
	}
	switch {
	case errors.Is(err, gocql.ErrTimeoutNoResponse):
		return ClassClientTimeout
	case errors.Is(err, gocql.ErrConnectionClosed), errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed):
		return ClassConnection
	case errors.Is(err, gocql.ErrNoConnections), errors.Is(err, syscall.ECONNREFUSED):
		return ClassNoHost
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ClassClientTimeout
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return ClassConnection
	}
	return ClassFatal
}

func oldIsCDC(err error) bool {
	var wt *gocql.RequestErrWriteTimeout
	if errors.As(err, &wt) && wt.WriteType == "CDC" {
		return true
	}
	var wf *gocql.RequestErrWriteFailure
	if errors.As(err, &wf) && wf.WriteType == "CDC" {
		return true
	}
	var re gocql.RequestError
	return errors.As(err, &re) && re.Code() == gocql.ErrCodeCDCWriteFailure
}

func oldBatchLogged(err error) bool {
	var wt *gocql.RequestErrWriteTimeout
	return errors.As(err, &wt) && wt.WriteType == "BATCH"
}

func oldNothingApplied(err error) bool {
	switch oldClassifyError(err) {
	case ClassUnavailable, ClassOverloaded, ClassBootstrapping, ClassNoHost:
		return true
	}
	return false
}

func oldProvesNothingApplied(err error, v Verdict) bool {
	if !oldNothingApplied(err) {
		return false
	}
	// Changed on purpose (issue 42, item 10): no connection sent nothing, for a
	// batch or an IN list as for one statement.
	if !v.MultiMutation() || oldClassifyError(err) == ClassNoHost {
		return true
	}
	return v.LoggedBatch() && oldClassifyError(err) == ClassUnavailable
}

func oldDecide(ctxDone bool, err error, v Verdict, pinned bool, attempts, maxAttempts int) (bool, Reason) {
	switch {
	case err == nil:
		return false, ReasonNoError
	case ctxDone:
		return false, ReasonContextDone
	case !oldClassifyError(err).Retryable() || oldIsCDC(err):
		return false, ReasonNotRetryable
	case attempts >= maxAttempts:
		return false, ReasonAttemptsExhausted
	case oldProvesNothingApplied(err, v):
		return true, ""
	case oldBatchLogged(err):
		return false, ReasonBatchLogged
	case !v.Idempotent:
		return false, ReasonNotIdempotent
	case !pinned:
		return false, ReasonNotPinned
	}
	return true, ""
}

func oldAttemptMayHaveApplied(err error, v Verdict) bool {
	c := oldClassifyError(err)
	return c.MayHaveApplied() || c == ClassCanceled || oldNothingApplied(err) && !oldProvesNothingApplied(err, v)
}

// rvCode is a RequestError that is none of gocql's typed errors (as errorFrame is).
type rvCode int

func (c rvCode) Code() int       { return int(c) }
func (c rvCode) Message() string { return "" }
func (c rvCode) Error() string   { return fmt.Sprintf("code %#x", int(c)) }

type rvTimeout struct{}

func (rvTimeout) Error() string   { return "timeout" }
func (rvTimeout) Timeout() bool   { return true }
func (rvTimeout) Temporary() bool { return true }

// reviewErrors: single errors as gocql and the network produce them (these must agree),
// then composite errors (errors.Join, several %w) that the old and new orders treat
// differently.
func reviewErrors() (single, composite []error) {
	wt := func(t string) error { return &gocql.RequestErrWriteTimeout{WriteType: t} }
	wf := func(t string) error { return &gocql.RequestErrWriteFailure{WriteType: t} }
	single = []error{
		nil,
		context.Canceled, context.DeadlineExceeded, fmt.Errorf("x: %w", context.DeadlineExceeded),
		&gocql.RequestErrUnavailable{}, &gocql.RequestErrReadTimeout{}, &gocql.RequestErrReadFailure{},
		&gocql.RequestErrCDCWriteFailure{}, &gocql.RequestErrCASWriteUnknown{}, &gocql.RequestErrAlreadyExists{},
		&gocql.RequestErrUnprepared{}, &gocql.RequestErrFunctionFailure{},
		rvCode(gocql.ErrCodeUnavailable), rvCode(gocql.ErrCodeOverloaded), rvCode(gocql.ErrCodeBootstrapping),
		rvCode(gocql.ErrCodeTruncate), rvCode(gocql.ErrCodeWriteTimeout), rvCode(gocql.ErrCodeReadTimeout),
		rvCode(gocql.ErrCodeReadFailure), rvCode(gocql.ErrCodeFunctionFailure), rvCode(gocql.ErrCodeWriteFailure),
		rvCode(gocql.ErrCodeCDCWriteFailure), rvCode(gocql.ErrCodeCASWriteUnknown), rvCode(gocql.ErrCodeSyntax),
		rvCode(gocql.ErrCodeServer), rvCode(gocql.ErrCodeProtocol), rvCode(gocql.ErrCodeInvalid), rvCode(0x9999),
		gocql.ErrTimeoutNoResponse, gocql.ErrConnectionClosed, gocql.ErrNoConnections,
		io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.EPIPE, net.ErrClosed, syscall.ECONNREFUSED,
		&net.OpError{Op: "read", Err: syscall.ECONNRESET}, &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED},
		&net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, &net.OpError{Op: "write", Err: errors.New("x")},
		rvTimeout{}, os.ErrDeadlineExceeded, &net.DNSError{IsTimeout: true}, &net.DNSError{},
		errors.New("application"), gocql.ErrNotFound, gocql.ErrSessionClosed,
		&OutcomeUnknownError{Err: gocql.ErrTimeoutNoResponse}, &OutcomeUnknownError{Err: wt("BATCH")},
		&OutcomeUnknownError{Err: wt("CDC")}, &OutcomeUnknownError{Err: rvCode(gocql.ErrCodeCDCWriteFailure)},
		&OutcomeUnknownError{Err: &gocql.RequestErrUnavailable{}}, &OutcomeUnknownError{Err: gocql.ErrNoConnections},
		&OutcomeUnknownError{Err: context.Canceled}, fmt.Errorf("wrap: %w", &OutcomeUnknownError{Err: wt("BATCH")}),
	}
	for _, t := range []string{"SIMPLE", "BATCH", "BATCH_LOG", "UNLOGGED_BATCH", "COUNTER", "CAS", "VIEW", "CDC", ""} {
		single = append(single, wt(t), wf(t), fmt.Errorf("ctx: %w", wt(t)), &OutcomeUnknownError{Err: wf(t)})
	}
	composite = []error{
		errors.Join(io.EOF, gocql.ErrNoConnections),
		fmt.Errorf("%w after %w", gocql.ErrNoConnections, syscall.ECONNRESET),
		errors.Join(gocql.ErrNoConnections, &net.OpError{Op: "read", Err: syscall.EPIPE}),
		errors.Join(&gocql.RequestErrUnavailable{}, wt("CDC")),
		errors.Join(&gocql.RequestErrReadTimeout{}, wt("BATCH")),
		errors.Join(wf("CDC"), wt("SIMPLE")),
		errors.Join(rvCode(gocql.ErrCodeOverloaded), rvCode(gocql.ErrCodeCDCWriteFailure)),
		&OutcomeUnknownError{},
	}
	return single, composite
}

func reviewVerdicts() map[string]Verdict {
	one := Classify("UPDATE t SET a = 1 WHERE k = 1")
	in := Classify("UPDATE t SET a = 1 WHERE k IN (1, 2)")
	notIdem := Classify("UPDATE t SET n = n + 1 WHERE k = 1")
	return map[string]Verdict{
		"single":          one,
		"in-list":         in,
		"not-idempotent":  notIdem,
		"logged batch 2":  verdict.Batch([]Verdict{one, one}, nil, nil, false, true),
		"unlogged batch2": verdict.Batch([]Verdict{one, one}, nil, nil, false, false),
		"logged batch 1":  verdict.Batch([]Verdict{one}, nil, nil, false, true),
		"logged batch in": verdict.Batch([]Verdict{in}, nil, nil, false, true),
		"counter batch":   verdict.Batch([]Verdict{notIdem}, nil, nil, true, false),
	}
}

func compareOldNew(t *testing.T, err error) (diffs []string) {
	t.Helper()
	p := NewPolicy(WithBackoff(time.Microsecond, time.Microsecond))
	if o, n := oldClassifyError(err), ClassifyError(err); o != n {
		diffs = append(diffs, fmt.Sprintf("class %v -> %v", o, n))
	}
	f := facts(err)
	if err != nil && oldIsCDC(err) != f.CDC {
		diffs = append(diffs, fmt.Sprintf("cdc %v -> %v", oldIsCDC(err), f.CDC))
	}
	if err != nil && oldBatchLogged(err) != f.BatchLogged {
		diffs = append(diffs, fmt.Sprintf("batchLogged %v -> %v", oldBatchLogged(err), f.BatchLogged))
	}
	for name, v := range reviewVerdicts() {
		for _, ctxDone := range []bool{false, true} {
			for _, pinned := range []bool{false, true} {
				for _, attempts := range []int{1, 3} {
					ob, or := oldDecide(ctxDone, err, v, pinned, attempts, 3)
					var ctx context.Context = context.Background()
					if ctxDone {
						c, cancel := context.WithCancel(ctx)
						cancel()
						ctx = c
					}
					p.cfg.MaxAttempts = 3
					nb, nr := p.decide(ctx, err, v, pinned, attempts)
					if ob != nb || or != nr {
						diffs = append(diffs, fmt.Sprintf("decide(%s ctxDone=%v pinned=%v attempts=%d) %v/%q -> %v/%q",
							name, ctxDone, pinned, attempts, ob, or, nb, nr))
					}
				}
			}
		}
		if err != nil && oldAttemptMayHaveApplied(err, v) != decision.AttemptMayHaveApplied(f, v) {
			diffs = append(diffs, fmt.Sprintf("mayHaveApplied(%s) %v -> %v", name, oldAttemptMayHaveApplied(err, v), decision.AttemptMayHaveApplied(f, v)))
		}
		if err != nil && oldProvesNothingApplied(err, v) != decision.ProvesNothingApplied(f, v) {
			diffs = append(diffs, fmt.Sprintf("provesNothingApplied(%s) changed", name))
		}
	}
	return diffs
}

// TestRetryClassifySingleErrorsUnchanged: for every error gocql v1.7 or the network
// returns on its own, the new Facts and decision equal the old ones.
func TestRetryClassifySingleErrorsUnchanged(t *testing.T) {
	single, _ := reviewErrors()
	for _, err := range single {
		for _, d := range compareOldNew(t, err) {
			t.Errorf("%#v: %s", err, d)
		}
	}
}

// TestRetryClassifyCompositeErrorsUnchanged: errors carrying two causes (errors.Join, two %w —
// what a function given to Do can return) are classified in a different order now: the
// driver's sentinels (ErrConnectionClosed, ErrNoConnections) are looked for before the
// network's (EOF, ECONNRESET, EPIPE, net.ErrClosed), and CDC / BATCH are read only from
// the typed error that decided the class. The old behaviour is the oracle.
func TestRetryClassifyCompositeErrorsUnchanged(t *testing.T) {
	_, composite := reviewErrors()
	for i, err := range composite {
		for _, d := range compareOldNew(t, err) {
			t.Errorf("composite #%d (%T): %s", i, err, d)
		}
	}
}

type reviewMarshaler struct{}

func (reviewMarshaler) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return nil, nil }

// TestRetryForValuesUnchanged: bound values judged through gocqlValues as the old
// forValues judged them (UNSET, gocql.Marshaler, gocql's UUID and Duration).
func TestRetryForValuesUnchanged(t *testing.T) {
	p := NewPolicy()
	var nilUUID *gocql.UUID
	u := gocql.TimeUUID()
	for _, tc := range []struct {
		val  any
		want bool // repeatable for a column of unknown type
	}{
		{nil, true}, {gocql.UnsetValue, true}, {[]int{}, true}, {[]int{1}, false}, {[]byte{1}, false},
		{u, true}, {&u, true}, {nilUUID, true}, {gocql.Duration{Days: 1}, true}, {&gocql.Duration{}, true},
		{reviewMarshaler{}, false}, {&reviewMarshaler{}, false}, {[1]string{"a"}, false}, {"s", true},
		{&[]int{1}, false}, {map[string]int{"a": 1}, true},
		{gocql.NamedValue("c", []int{1}), false}, {gocql.NamedValue("c", 1), false}, // out of reach: may be a list
		{map[int]struct{}{7: {}}, false}, {map[int]struct{}{}, true}, // a set idiom the drivers marshal into a list
	} {
		v := p.Repeatable("ks", "UPDATE t SET c = ? WHERE k = 1", []any{tc.val})
		if v.Idempotent != tc.want {
			t.Errorf("%T %v: idempotent %v, want %v", tc.val, tc.val, v.Idempotent, tc.want)
		}
	}
}

// forkQueryError has the shape of the ScyllaDB fork's QueryError.
type forkQueryError struct {
	err      error
	executed bool
}

func (e *forkQueryError) Error() string             { return e.err.Error() }
func (e *forkQueryError) Unwrap() error             { return e.err }
func (e *forkQueryError) PotentiallyExecuted() bool { return e.executed }

// TestClassifyForkNoConnection: the fork's "host pool does not have connections" is no
// connection (nothing sent) — unless the fork says an earlier attempt was potentially
// executed: then the execution may have applied.
func TestClassifyForkNoConnection(t *testing.T) {
	pool := errors.New("gocql: host pool does not have connections")
	if c := ClassifyError(&forkQueryError{err: pool}); c != ClassNoHost {
		t.Errorf("nothing executed: %v, want no_host", c)
	}
	if c := ClassifyError(&forkQueryError{err: pool, executed: true}); c != ClassConnection || !c.MayHaveApplied() {
		t.Errorf("potentially executed: %v, want connection (may have applied)", c)
	}
}
