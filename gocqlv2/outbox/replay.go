package outbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	core "github.com/cqlsafe/cqlsafe/internal/core/outbox"
)

// ReplayReport says what one Replay did with the records it read.
type ReplayReport = core.ReplayReport

// ReplayOption configures one Replay. An invalid value is an error from Replay, before
// anything is sent.
type ReplayOption = core.ReplayOption

// ReportTo makes Replay fill in *r (when it returns, whatever the error).
func ReportTo(r *ReplayReport) ReplayOption { return core.ReportTo(r) }

// Replay re-applies the recorded writes, oldest first, each with its original timestamp
// and batch type, through p's retries (a nil p is retry.NewPolicy()), and removes the ones
// applied. It returns how many were applied; ReportTo gives the details.
//
// A record Replay will not send stays in the outbox and is reported in the error, and
// Replay goes on with the next: one that p classifies not idempotent or a COUNTER batch
// (errors.Is retry.ErrNotIdempotent), one it cannot decode, and one Cassandra rejects —
// invalid (its table or column was dropped, a type changed), syntax, unauthorized,
// configuration — which would fail the same way on every replay (ReplayReport.Rejected;
// an operator drops it with Drop). Going on past a record is safe: each carries its own
// timestamp, so the order records are applied in does not change what Cassandra holds.
// On any other failure (Cassandra unreachable, timeouts) or when ctx is done it stops,
// keeping that record and the rest: a later Replay re-sends them, which is harmless
// (same statements, same timestamps).
//
// Writes with a TTL are replayed with what remains of it (see the package doc); a write
// whose TTL has run out is sent with TTL 1, not dropped (ReplayReport.Expired): its
// expired cells would still hide older values, and its nulls are tombstones. A table's default_time_to_live is read from
// system_schema.tables (gocql's metadata does not expose it); failing to read it fails
// the replay like a failed write.
//
// Records appended while Replay runs are kept: Replay only removes records it applied.
//
// Records do not store a keyspace: statements that name none run in s's keyspace, so
// replay with a session on the keyspace the writes were made in.
func (o *Outbox) Replay(ctx context.Context, s *gocql.Session, p *retry.Policy, opts ...ReplayOption) (int, error) {
	report, err := core.ReplayOptions(opts)
	if err != nil {
		return 0, err
	}
	if s == nil {
		return 0, errors.New("outbox: replay: nil session")
	}
	if p == nil {
		p = retry.NewPolicy()
	}
	// Replays go through p's retries, without an outbox (a replay that stays unknown
	// stays in this one), and with the session's schema when p has none.
	ropts := []retry.Option{retry.WithPolicy(p), retry.WithOutbox(nil)}
	if p.Schema() == nil {
		ropts = append(ropts, retry.WithSchema(retry.SessionSchema(s)))
	}
	rp := retry.NewPolicy(ropts...)
	if err := rp.Err(); err != nil {
		return 0, err
	}
	ks := s.Query("").Keyspace()    // where statements that name no keyspace run
	defaults := map[[2]string]int{} // default_time_to_live by keyspace and table, read once per Replay
	return o.Outbox.Replay(ctx, report, func(ctx context.Context, e *retry.OutcomeUnknownError, typ gocql.BatchType) (core.TTLNote, error) {
		tableTTL := func(ks, table string) (int, error) {
			key := [2]string{ks, table}
			if d, ok := defaults[key]; ok {
				return d, nil
			}
			d, err := readDefaultTTL(ctx, s, ks, table)
			if err != nil {
				return 0, err
			}
			defaults[key] = d
			return d, nil
		}
		stmts, note, err := core.ReplayTTL(e, gocql.UnsetValue, time.Now().UnixMicro(), ks, tableTTL)
		if err != nil {
			return note, err
		}
		// Judged again here, with its values and the schema, whatever the record says:
		// it may come from an older version or a hand edit, and a repeat of a
		// non-idempotent write (a non-frozen list assignment duplicates the elements) is
		// exactly what replay must not do. OnlyIfRepeatable sends nothing then.
		at := []retry.ExecOption{retry.AtTimestamp(e.Timestamp), retry.OnlyIfRepeatable()}
		// At the write's own consistency: a write made at ALL or EACH_QUORUM is not
		// replayed at the session's ONE.
		var cl gocql.Consistency
		if e.Consistency != "" {
			c, err := gocql.ParseConsistencyWrapper(e.Consistency)
			if err != nil {
				return note, fmt.Errorf("outbox: record consistency %q: %w", e.Consistency, err)
			}
			cl = c
		}
		if e.Batch {
			b := s.Batch(typ)
			for _, st := range stmts {
				b.Query(st.CQL, st.Values...)
			}
			if e.Consistency != "" {
				b.Consistency(cl)
			}
			return note, rp.ExecBatch(ctx, s, b, at...)
		}
		st := stmts[0]
		q := s.Query(st.CQL, st.Values...)
		if e.Consistency != "" {
			q.Consistency(cl)
		}
		return note, rp.Exec(ctx, q, at...)
	})
}

// readDefaultTTL reads a table's default_time_to_live: 0 (none) for a table it does not
// find, whose writes fail on their own.
func readDefaultTTL(ctx context.Context, s *gocql.Session, ks, table string) (int, error) {
	if ks == "" || table == "" {
		return 0, nil
	}
	var d int
	err := s.Query(`SELECT default_time_to_live FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?`, ks, table).
		ScanContext(ctx, &d)
	if errors.Is(err, gocql.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("outbox: read default_time_to_live of %s.%s: %w", ks, table, err)
	}
	return d, nil
}
