package outbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/retry"
)

// ReplayReport says what one Replay did with the records it read.
type ReplayReport struct {
	Applied int // sent and applied, then removed (Replay's count)
	Expired int // removed unsent: every write in them had a TTL that ran out since the first attempt
	Kept    int // left in the outbox: refused, failed, or not reached

	// Of Applied: sent with TTLs shortened by the time since the first attempt.
	Shortened int
	// Of Applied: sent with a TTL as recorded, which may outlive the first attempt's:
	// the record's timestamp is in the future, or a statement's TTL could not be read.
	TTLAsRecorded int
}

// ReplayOption configures one Replay. An invalid value is an error from Replay, before
// anything is sent.
type ReplayOption func(*replayConfig) error

type replayConfig struct {
	report *ReplayReport
}

// ReportTo makes Replay fill in *r (when it returns, whatever the error).
func ReportTo(r *ReplayReport) ReplayOption {
	return func(c *replayConfig) error {
		if r == nil {
			return errors.New("outbox: ReportTo(nil)")
		}
		c.report = r
		return nil
	}
}

// Replay re-applies the recorded writes, oldest first, each with its original timestamp
// and batch type, through p's retries (a nil p is retry.NewPolicy()), and removes the ones
// applied. It returns how many were applied; ReportTo gives the details.
//
// A record Replay will not send stays in the outbox and is reported in the error, and
// Replay goes on with the next: one that p classifies not idempotent or a COUNTER batch
// (errors.Is retry.ErrNotIdempotent), or one it cannot decode. On the first write that fails
// (or when ctx is done) it stops, keeping that record and the rest: a later Replay
// re-sends them, which is harmless (same statements, same timestamps).
//
// Writes with a TTL are replayed with what remains of it (see the package doc), and a
// record whose every write has run out of TTL is removed without being sent
// (ReplayReport.Expired). A table's default_time_to_live is read from
// system_schema.tables (gocql's metadata does not expose it); failing to read it fails
// the replay like a failed write.
//
// Records appended while Replay runs are kept: Replay only removes records it applied.
//
// Records do not store a keyspace: statements that name none run in s's keyspace, so
// replay with a session on the keyspace the writes were made in.
func (o *Outbox) Replay(ctx context.Context, s *gocql.Session, p *retry.Policy, opts ...ReplayOption) (int, error) {
	var cfg replayConfig
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&cfg); err != nil {
			return 0, err
		}
	}
	if cfg.report != nil {
		*cfg.report = ReplayReport{}
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
	q := s.Query("")
	ks := q.Keyspace() // where statements that name no keyspace run
	q.Release()
	defaults := map[[2]string]int{} // default_time_to_live by keyspace and table, read once per Replay
	return o.replay(ctx, cfg.report, func(ctx context.Context, e *retry.OutcomeUnknownError, typ gocql.BatchType) (ttlNote, error) {
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
		stmts, note, err := replayTTL(e, time.Now().UnixMicro(), ks, tableTTL)
		if err != nil || note == ttlExpired {
			return note, err
		}
		// Judged again here, with its values and the schema, whatever the record says:
		// it may come from an older version or a hand edit, and a repeat of a
		// non-idempotent write (a non-frozen list assignment duplicates the elements) is
		// exactly what replay must not do. OnlyIfRepeatable sends nothing then.
		at := []retry.ExecOption{retry.AtTimestamp(e.Timestamp), retry.OnlyIfRepeatable()}
		if e.Batch {
			b := s.NewBatch(typ)
			for _, st := range stmts {
				b.Query(st.CQL, st.Values...)
			}
			return note, rp.ExecBatch(ctx, s, b, at...)
		}
		st := stmts[0]
		return note, rp.Exec(ctx, s.Query(st.CQL, st.Values...), at...)
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
		WithContext(ctx).Scan(&d)
	if errors.Is(err, gocql.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("outbox: read default_time_to_live of %s.%s: %w", ks, table, err)
	}
	return d, nil
}

// ttlNote says what a replay did with a record's TTLs.
type ttlNote int

const (
	ttlNoTTL      ttlNote = iota // no TTL in it, or TTLs of 0
	ttlShortened                 // sent with TTLs shortened (or expired statements left out)
	ttlAsRecorded                // sent with a TTL as recorded: future timestamp, or unreadable TTL
	ttlExpired                   // every write in it had run out of TTL: not sent
)

// replayTTL returns the statements of e to send at now (µs since the epoch) so that
// their cells expire when the first attempt's would have: each TTL less the whole
// seconds since e.Timestamp, rounded up. Statements whose TTL ran out are left out; if
// none is left the record is ttlExpired.
func replayTTL(e *retry.OutcomeUnknownError, now int64, ks string, tableTTL func(ks, table string) (int, error)) ([]retry.Statement, ttlNote, error) {
	elapsed, ok := elapsedSeconds(e.Timestamp, now)
	if !ok {
		// A timestamp ahead of this clock tells nothing about when the write was first
		// sent: send it as recorded, noting whether that keeps a TTL.
		for _, st := range e.Statements {
			r, err := shortenTTL(st.CQL, st.Values, ks, 0, tableTTL)
			if err != nil {
				return nil, 0, err
			}
			if r.changed || r.unknown {
				return e.Statements, ttlAsRecorded, nil
			}
		}
		return e.Statements, ttlNoTTL, nil
	}
	note := ttlNoTTL
	var out []retry.Statement
	for _, st := range e.Statements {
		r, err := shortenTTL(st.CQL, st.Values, ks, elapsed, tableTTL)
		if err != nil {
			return nil, 0, err
		}
		switch {
		case r.expired:
			note = max(note, ttlShortened)
			continue
		case r.unknown:
			note = ttlAsRecorded
		case r.changed:
			note = max(note, ttlShortened)
		}
		out = append(out, retry.Statement{CQL: r.cql, Values: r.values})
	}
	if len(out) == 0 {
		return nil, ttlExpired, nil
	}
	return out, note, nil
}

// applyFunc sends one record and says what it did with its TTLs. It returns an error
// matching retry.ErrNotIdempotent, without sending anything, for a record it refuses,
// and ttlExpired, without sending anything, for one whose TTLs all ran out.
type applyFunc func(ctx context.Context, e *retry.OutcomeUnknownError, typ gocql.BatchType) (ttlNote, error)

func (o *Outbox) replay(ctx context.Context, rep *ReplayReport, apply applyFunc) (int, error) {
	if rep == nil {
		rep = new(ReplayReport)
	}
	o.replayMu.Lock()
	defer o.replayMu.Unlock()
	recs, end, err := o.snapshot()
	if err != nil {
		return 0, err
	}
	var errs []error
	var keep []rawRecord
	done := 0 // applied or expired: removed
	for i, r := range recs {
		fail := func(err error) {
			errs = append(errs, fmt.Errorf("outbox: replay %d of %d: %w", i+1, len(recs), err))
		}
		if err := ctx.Err(); err != nil {
			fail(err)
			keep = append(keep, recs[i:]...)
			break
		}
		e, typ, err := decodeRecord(r.payload)
		if err == nil {
			err = replayable(e, typ)
		}
		var note ttlNote
		if err == nil {
			note, err = apply(ctx, e, typ)
			if err != nil && !errors.Is(err, retry.ErrNotIdempotent) {
				fail(err)
				keep = append(keep, recs[i:]...)
				break
			}
		}
		if err != nil {
			fail(err)
			keep = append(keep, r)
			continue
		}
		done++
		switch note {
		case ttlExpired:
			rep.Expired++
			continue
		case ttlShortened:
			rep.Shortened++
		case ttlAsRecorded:
			rep.TTLAsRecorded++
		}
		rep.Applied++
	}
	rep.Kept = len(keep)
	if done > 0 {
		if err := o.rewrite(keep, end); err != nil {
			errs = append(errs, err)
		}
	}
	return rep.Applied, errors.Join(errs...)
}

// replayable refuses a record that must not be sent again (Append stores none, Replay
// sends none).
func replayable(e *retry.OutcomeUnknownError, typ gocql.BatchType) error {
	if len(e.Statements) == 0 || (!e.Batch && len(e.Statements) != 1) {
		return fmt.Errorf("outbox: record with %d statement(s) (batch %v)", len(e.Statements), e.Batch)
	}
	if e.Batch && typ == gocql.CounterBatch {
		return fmt.Errorf("%w: COUNTER batch", retry.ErrNotIdempotent)
	}
	if _, ok := batchTypeName[typ]; e.Batch && !ok {
		return fmt.Errorf("outbox: unknown batch type %d", typ)
	}
	// Without its original timestamp a replay would be stamped anew and could
	// overwrite a newer write.
	if e.Timestamp == 0 {
		return errors.New("outbox: record without a pinned timestamp")
	}
	return nil
}
