package suite

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/internal/scenario"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/retry"
)

// TestRetryConditionalAfterUnavailableOrOverloaded: scenario.ConditionalAfterRefusal on
// gocql v1.7 — an LWT answered Unavailable (at its commit consistency) or Overloaded
// after Cassandra applied it is never re-sent and is reported as an unknown outcome of
// a conditional write; one refused at SERIAL is re-sent and lands once.
func TestRetryConditionalAfterUnavailableOrOverloaded(t *testing.T) {
	s0, ks := node.Keyspace(t)
	s, px := proxied(t, ks, 5*time.Second)
	p := retry.NewPolicy(retry.WithSchema(retry.SessionSchema(s)), retry.WithMaxAttempts(3))
	scenario.ConditionalAfterRefusal(t, s0, px, scenarioPolicy(s, p))
}

// TestRetryBindRefused: scenario.BindRefused on gocql v1.7 — Session.Bind and
// Batch.Bind writes are refused before the binder runs, through Exec, ExecBatch and Do.
func TestRetryBindRefused(t *testing.T) {
	s0, ks := node.Keyspace(t)
	s, px := proxied(t, ks, 500*time.Millisecond)
	p := retry.NewPolicy(retry.WithSchema(retry.SessionSchema(s)), retry.WithMaxAttempts(3))
	binder := func(bind func() []any) func(*gocql.QueryInfo) ([]any, error) {
		return func(*gocql.QueryInfo) ([]any, error) { return bind(), nil }
	}
	scenario.BindRefused(t, s0, px, scenario.Binder{
		Exec: func(ctx context.Context, stmt string, bind func() []any) error {
			return p.Exec(ctx, s.Bind(stmt, binder(bind)))
		},
		ExecBatch: func(ctx context.Context, stmt string, bind func() []any) error {
			b := s.NewBatch(gocql.UnloggedBatch)
			b.Bind(stmt, binder(bind))
			return p.ExecBatch(ctx, s, b)
		},
		Do: func(ctx context.Context, stmt string, bind func() []any) error {
			return retry.Do(ctx, func(ctx context.Context) error { return retry.Exec(ctx, s.Bind(stmt, binder(bind))) }, retry.WithMaxAttempts(3))
		},
		Refused: func(err error) bool { return errors.Is(err, retry.ErrUnboundValues) },
	})
}

// TestRetryNoConnectionYet: scenario.NoConnectionYet on gocql v1.7 — the driver finds no
// connection to send on and asks no retry policy; the Policy waits for one within its
// attempts and the write lands.
func TestRetryNoConnectionYet(t *testing.T) {
	s0, ks := node.Keyspace(t)
	s, px := proxiedWith(t, ks, 5*time.Second, func(cl *gocql.ClusterConfig) {
		cl.ReconnectionPolicy = &gocql.ConstantReconnectionPolicy{MaxRetries: 3, Interval: 50 * time.Millisecond}
		cl.ReconnectInterval = 100 * time.Millisecond
	})
	// Up to ~8 s of backoff, no jitter: room for the pool to refill under -race on a
	// loaded machine.
	p := retry.NewPolicy(retry.WithSchema(retry.SessionSchema(s)), retry.WithMaxAttempts(20),
		retry.WithBackoff(50*time.Millisecond, 500*time.Millisecond), retry.WithoutJitter())
	scenario.NoConnectionYet(t, s0, px, scenarioPolicy(s, p))
}

// TestRetryConnectionTornAfterWrite: scenario.TornConnection on gocql v1.7 — a connection the
// driver tears down after the write was forwarded (an unreadable response frame) means
// the write may have applied: a counter is an unknown outcome, an insert is re-sent.
func TestRetryConnectionTornAfterWrite(t *testing.T) {
	s0, ks := node.Keyspace(t)
	s, px := proxied(t, ks, 5*time.Second)
	p := retry.NewPolicy(retry.WithSchema(retry.SessionSchema(s)), retry.WithMaxAttempts(3))
	scenario.TornConnection(t, s0, px, scenarioPolicy(s, p))
}

// TestRetryDoRemembersEarlierUnknown: scenario.DoRemembers on gocql v1.7 — once any run of a
// step may have applied it, Do's answer is the outcome-unknown error, whatever the last
// run met.
func TestRetryDoRemembersEarlierUnknown(t *testing.T) {
	s0, ks := node.Keyspace(t)
	s, px := proxied(t, ks, 400*time.Millisecond)
	scenario.DoRemembers(t, s0, px, func(ctx context.Context, stmt string, args ...any) error {
		return retry.Do(ctx, func(ctx context.Context) error { return retry.Exec(ctx, s.Query(stmt, args...)) },
			retry.WithSchema(retry.SessionSchema(s)), retry.WithMaxAttempts(2))
	}, func(err error) bool { return errors.Is(err, retry.ErrOutcomeUnknown) })
}

// TestRetryDefaultPolicyListValues: scenario.DefaultPolicyLists on gocql v1.7 — a Policy with
// no schema does not re-send a named list value or a []byte bound to a list<tinyint>.
func TestRetryDefaultPolicyListValues(t *testing.T) {
	s0, ks := node.Keyspace(t)
	s, px := proxied(t, ks, 400*time.Millisecond)
	p := retry.NewPolicy(retry.WithMaxAttempts(3))
	scenario.DefaultPolicyLists(t, s0, px, scenarioPolicy(s, p), gocql.NamedValue)
}

// scenarioPolicy is p over s as the shared scenarios use it: Raw sends once, without p;
// Unknown is p's outcome-unknown error and whether it says the write was conditional.
func scenarioPolicy(s *gocql.Session, p *retry.Policy) scenario.Policy {
	return scenario.Policy{
		Raw: func(stmt string, args ...any) error {
			return s.Query(stmt, args...).RetryPolicy(cqlvalue.NoRetry{}).Exec()
		},
		Exec: func(ctx context.Context, stmt string, args ...any) error {
			return p.Exec(ctx, s.Query(stmt, args...))
		},
		Unknown: func(err error) (bool, bool) {
			var ou *retry.OutcomeUnknownError
			if !errors.As(err, &ou) {
				return false, false
			}
			return errors.Is(err, retry.ErrOutcomeUnknown), ou.Conditional
		},
		NoConnection: cqlvalue.NoConnection,
	}
}

// TestRetryCallerTimestampIsThePin: scenario.CallerTimestamp on gocql v1.7 — a query's or
// batch's own WithTimestamp is the pin, also through a retry; one that differs from
// AtTimestamp is refused, nothing written.
func TestRetryCallerTimestampIsThePin(t *testing.T) {
	s0, ks := node.Keyspace(t)
	s, px := proxied(t, ks, 300*time.Millisecond)
	p := retry.NewPolicy(retry.WithMaxAttempts(3))
	scenario.CallerTimestamp(t, s0, px, func(ctx context.Context, batch bool, own, at int64, stmt string) error {
		var opts []retry.ExecOption
		if at != 0 {
			opts = append(opts, retry.AtTimestamp(at))
		}
		if batch {
			b := s.NewBatch(gocql.LoggedBatch)
			b.Query(stmt)
			b.WithTimestamp(own)
			return p.ExecBatch(ctx, s, b, opts...)
		}
		return p.Exec(ctx, s.Query(stmt).WithTimestamp(own), opts...)
	})
}

// TestRetryRandomizedTruth: scenario.Truth on gocql v1.7 — counters, list appends, LWT
// appends, IF NOT EXISTS, inserts and Bind statements on 8 goroutines under faults before
// and after Cassandra applied them; every answer true, and the naive control's not.
func TestRetryRandomizedTruth(t *testing.T) {
	s0, ks := node.Keyspace(t)
	s, px := proxied(t, ks, 500*time.Millisecond)
	p := retry.NewPolicy(retry.WithSchema(retry.SessionSchema(s)), retry.WithMaxAttempts(3),
		retry.WithBackoff(5*time.Millisecond, 50*time.Millisecond))
	scenario.Truth(t, s0, px, scenarioPolicy(s, p), func(ctx context.Context, stmt string, bind func() []any) error {
		return p.Exec(ctx, s.Bind(stmt, func(*gocql.QueryInfo) ([]any, error) { return bind(), nil }))
	})
}
