package retry_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/retry"
)

func ExampleClassify() {
	for _, stmt := range []string{
		"INSERT INTO users (id, name) VALUES (?, ?)",
		"UPDATE page_views SET n = n + 1 WHERE page = ?",
		"INSERT INTO events (id, at) VALUES (uuid(), toTimestamp(now()))",
		"INSERT INTO users (id) VALUES (?) IF NOT EXISTS",
	} {
		v := retry.Classify(stmt)
		fmt.Println(v.Idempotent, v.Reasons)
	}
	// Output:
	// true []
	// false [counter update "n = n + 1"]
	// false [server-side non-deterministic function uuid() in a write server-side non-deterministic function now() in a write]
	// false [lightweight transaction (IF NOT EXISTS)]
}

func ExampleNewPolicy() {
	// A cluster-wide policy: never retries what is not idempotent.
	policy := retry.NewPolicy(retry.ServicePreset(), retry.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))))
	cluster := gocql.NewCluster("127.0.0.1:9042")
	cluster.RetryPolicy = policy
	fmt.Println(policy.MaxAttempts())
	// Output: 3
}

func ExampleDo() {
	var session *gocql.Session // your session
	if session == nil {
		return
	}
	eventID := gocql.MustRandomUUID() // chosen once, before the first attempt
	err := retry.Do(context.Background(), func(ctx context.Context) error {
		if err := retry.Exec(ctx, session.Query(`INSERT INTO events (id, user_id) VALUES (?, ?)`, eventID, 7)); err != nil {
			return err
		}
		return retry.Exec(ctx, session.Query(`INSERT INTO user_events (user_id, event_id) VALUES (?, ?)`, 7, eventID))
	}, retry.WithMaxAttempts(5), retry.WithBackoff(50*time.Millisecond, time.Second))
	var unknown *retry.OutcomeUnknownError
	if errors.As(err, &unknown) {
		// Safe to re-apply later: same statements, same values, same timestamp.
		fmt.Println("re-apply later at timestamp", unknown.Timestamp)
	}
}

func ExamplePolicy_Exec() {
	var session *gocql.Session // your session
	if session == nil {
		return
	}
	ctx := context.Background()
	// Column types make the verdict exact: a set update is repeatable, a counter is not.
	policy := retry.NewPolicy(retry.WithSchema(retry.SessionSchema(session)))
	err := policy.Exec(ctx, session.Query(`UPDATE users SET tags = tags + ? WHERE id = ?`, []string{"vip"}, 42))
	var unknown *retry.OutcomeUnknownError
	if errors.As(err, &unknown) && unknown.Idempotent {
		// Later: re-apply it with the timestamp it was first pinned to.
		q := session.Query(unknown.Statements[0].CQL, unknown.Statements[0].Values...)
		err = policy.Exec(ctx, q, retry.AtTimestamp(unknown.Timestamp), retry.OnlyIfRepeatable())
	}
	_ = err
}

func ExamplePolicy_ExecBatch() {
	var session *gocql.Session // your session
	if session == nil {
		return
	}
	policy := retry.NewPolicy()
	ts := policy.Clock().Next() // bring your own timestamp: AtTimestamp
	b := session.NewBatch(gocql.LoggedBatch)
	b.Query(`INSERT INTO orders (id, total) VALUES (?, ?)`, 7, 1250)
	b.Query(`INSERT INTO orders_by_user (user_id, order_id) VALUES (?, ?)`, 42, 7)
	err := policy.ExecBatch(context.Background(), session, b, retry.AtTimestamp(ts))
	if errors.Is(err, retry.ErrBatchLogged) {
		err = nil // in the batch log: Cassandra will apply it
	}
	_ = err
}

// ExamplePolicy_MeasureClock keeps a service's write timestamps within 500 ms of the
// cluster's clock: measured at start-up and every minute; while the last measurement is
// further off, the Policy refuses writes (ErrClockSkew, nothing sent) rather than stamp
// them where they could lose to older writes.
func ExamplePolicy_MeasureClock() {
	ctx := context.Background()
	var session *gocql.Session // the service's session
	policy := retry.NewPolicy(retry.WithMaxClockOffset(500 * time.Millisecond))
	measure := func() {
		o, err := policy.MeasureClock(ctx, session)
		if err != nil {
			slog.Warn("clock not measured", "err", err)
			return
		}
		slog.Info("clock measured", "offset", o.Offset, "uncertainty", o.Uncertainty, "host", o.Host)
	}
	if session != nil {
		measure()
		go func() {
			for range time.Tick(time.Minute) {
				measure()
			}
		}()
	}
	err := policy.Exec(ctx, session.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, "x"))
	if errors.Is(err, retry.ErrClockSkew) {
		// Fix the clock (NTP); the next measurement within the bound lets writes through.
	}
}
