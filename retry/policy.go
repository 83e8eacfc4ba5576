package retry

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/wait"
)

// Policy is a gocql.RetryPolicy that never retries what is not idempotent.
//
// A query or batch is retried only when gocql marks it idempotent (Pin and Exec do
// that when Classify agrees), the error is of a retryable class and attempts remain:
//
//	Unavailable, Overloaded, IsBootstrapping, no host   retry on the next host
//	read timeout                                         retry
//	write timeout, write failure, client-side timeout,
//	connection lost mid-request                          retry (idempotent only)
//	read failure, syntax, invalid, unauthorized, other   never
//	context cancelled or deadline passed                 never
//
// Waits between attempts back off exponentially with jitter and end early when the
// query's context is done. Statements run through Pin/Exec count attempts per
// execution, so a reused *gocql.Query does not inherit attempts from earlier
// executions (gocql's own count, Query.Attempts, accumulates across them); set on a
// cluster without Pin, the policy falls back to gocql's count.
//
// A Policy is safe for concurrent use.
type Policy struct {
	cfg     config
	verdict sync.Map // statement text → Verdict (bounded by verdictCacheMax)
	cached  int64
	mu      sync.Mutex
}

const verdictCacheMax = 10_000

var _ gocql.RetryPolicy = (*Policy)(nil)

// NewPolicy returns a Policy. Defaults:
//
//   - 4 attempts per execution, the first included (WithMaxAttempts);
//   - backoff 50 ms doubling to at most 2 s, full jitter (WithBackoff, WithoutJitter);
//   - write timestamps from clientid.ProcessClock() (WithClock);
//   - no observer, no logging (WithObserver, WithLogger);
//   - no schema metadata: `x = x + ?` is treated as a counter or list (WithSchema);
//   - no outbox (WithOutbox).
//
// ServicePreset() tunes it for request-serving code.
func NewPolicy(opts ...Option) *Policy {
	c := defaults()
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return &Policy{cfg: c}
}

// MaxAttempts returns the bound on attempts per execution.
func (p *Policy) MaxAttempts() int { return p.cfg.maxAttempts }

// execState is one execution's record of its attempts, carried in the context that
// Pin attaches to the query. gocql calls the query's observer after each attempt and
// then Attempt, on the same goroutine; the state links the two.
type execState struct {
	mu        sync.Mutex
	attempts  int
	lastErr   error
	statement string
	values    []any
}

type stateKey struct{}

func stateFrom(ctx context.Context) *execState {
	if ctx == nil {
		return nil
	}
	st, _ := ctx.Value(stateKey{}).(*execState)
	return st
}

// Attempt implements gocql.RetryPolicy: it decides whether to retry after a failed
// attempt and waits the backoff delay first.
func (p *Policy) Attempt(q gocql.RetryableQuery) bool {
	ctx := q.Context()
	idem := false
	if iq, ok := q.(interface{ IsIdempotent() bool }); ok {
		idem = iq.IsIdempotent()
	}
	attempts := q.Attempts()
	var lastErr error
	stmt := ""
	if st := stateFrom(ctx); st != nil {
		st.mu.Lock()
		attempts, lastErr, stmt = st.attempts, st.lastErr, st.statement
		st.mu.Unlock()
	}
	ev := Event{Attempt: attempts, Err: lastErr, Class: ClassifyError(lastErr), Idempotent: idem, Statement: stmt}
	switch {
	case !idem:
		ev.Why = "not idempotent"
	case lastErr != nil && !ev.Class.Retryable():
		ev.Why = "error class " + ev.Class.String() + " is not retryable"
	case attempts >= p.cfg.maxAttempts:
		ev.Why = "attempts exhausted"
	case ctx != nil && ctx.Err() != nil:
		ev.Why = "context done"
	default:
		ev.Retrying = true
		ev.Delay = p.delay(attempts)
	}
	p.report(ev)
	if !ev.Retrying {
		return false
	}
	return sleep(ctx, ev.Delay) == nil
}

// GetRetryType implements gocql.RetryPolicy: where to retry, by error class.
func (p *Policy) GetRetryType(err error) gocql.RetryType {
	switch ClassifyError(err) {
	case ClassUnavailable, ClassOverloaded, ClassBootstrapping, ClassNoHost:
		return gocql.RetryNextHost
	case ClassClientTimeout, ClassConnection:
		if p.cfg.nextHost {
			return gocql.RetryNextHost
		}
		return gocql.Retry
	case ClassReadTimeout, ClassWriteTimeout, ClassWriteFailure:
		return gocql.Retry
	}
	return gocql.Rethrow
}

// delay is the wait before retry number `failed` (1 after the first failure).
func (p *Policy) delay(failed int) time.Duration {
	d := p.cfg.baseDelay
	for i := 1; i < failed && d < p.cfg.maxDelay; i++ {
		d *= 2
	}
	d = min(d, p.cfg.maxDelay)
	if p.cfg.jitter && d > 0 {
		d = time.Duration(rand.Int64N(int64(d) + 1))
	}
	return d
}

func (p *Policy) report(ev Event) {
	if p.cfg.observer != nil {
		p.cfg.observer(ev)
	}
	if l := p.cfg.logger; l != nil {
		attrs := []any{slog.Int("attempt", ev.Attempt), slog.String("class", ev.Class.String()),
			slog.String("statement", ev.Statement), slog.Bool("idempotent", ev.Idempotent)}
		if ev.Err != nil {
			attrs = append(attrs, slog.String("error", ev.Err.Error()))
		}
		if ev.Retrying {
			l.Warn("cqlsafe: retrying", append(attrs, slog.Duration("delay", ev.Delay))...)
		} else {
			l.Warn("cqlsafe: not retrying", append(attrs, slog.String("why", ev.Why))...)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error { return wait.Sleep(ctx, d) }

// classify returns the cached verdict for a statement text.
func (p *Policy) classify(stmt string) Verdict {
	if v, ok := p.verdict.Load(stmt); ok {
		return v.(Verdict)
	}
	v := ClassifyWithSchema(stmt, p.cfg.schema)
	p.mu.Lock()
	if p.cached < verdictCacheMax {
		p.cached++
		p.verdict.Store(stmt, v)
	}
	p.mu.Unlock()
	return v
}
