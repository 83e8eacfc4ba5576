package outbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/cqlsafe/cqlsafe/internal/core/engine"
)

// ReplayReport says what one Replay did with the records it read.
type ReplayReport struct {
	Applied int // sent and applied, then removed (Replay's count)
	// Of Applied: every write in them had a TTL that ran out since the first attempt.
	// They are sent with TTL 1, not dropped: an expired cell still hides the older
	// values of its column, and nulls and collection overwrites are tombstones.
	Expired int
	Kept    int // left in the outbox: refused, failed, or not reached
	// Of Kept: records Cassandra rejected (Driver.Rejected: the statement is invalid
	// now — a dropped table or column, a changed type —, or not authorized). Replay goes
	// on past them; they stay until an operator drops them (Outbox.Drop).
	Rejected int

	// Of Applied: sent with TTLs shortened by the time since the first attempt (and not
	// Expired).
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

// ReplayOptions folds opts: the report to fill (a fresh one when none asked), reset.
func ReplayOptions(opts []ReplayOption) (*ReplayReport, error) {
	var cfg replayConfig
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	if cfg.report == nil {
		cfg.report = new(ReplayReport)
	}
	*cfg.report = ReplayReport{}
	return cfg.report, nil
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

// TTLNote says what a replay did with a record's TTLs.
type TTLNote int

const (
	TTLNone       TTLNote = iota // no TTL in it, or TTLs of 0
	TTLShortened                 // sent with TTLs shortened (those that ran out: 1)
	TTLAsRecorded                // sent with a TTL as recorded: future timestamp, or unreadable TTL
	TTLExpired                   // every write in it had run out of TTL: sent with TTL 1
)

// ReplayTTL returns the statements of e to send at now (µs since the epoch) so that
// their cells expire when the first attempt's would have: each TTL less the whole
// seconds since e.Timestamp, rounded up; a TTL that ran out becomes 1 (see ShortenTTL).
// A record whose every write ran out is TTLExpired, and still sent.
func ReplayTTL[B comparable](e *engine.OutcomeUnknownError[B], unset any, now int64, ks string, tableTTL func(ks, table string) (int, error)) ([]engine.Statement, TTLNote, error) {
	elapsed, ok := ElapsedSeconds(e.Timestamp, now)
	if !ok {
		// A timestamp ahead of this clock tells nothing about when the write was first
		// sent: send it as recorded, noting whether that keeps a TTL.
		for _, st := range e.Statements {
			r, err := ShortenTTL(st.CQL, st.Values, unset, ks, 0, tableTTL)
			if err != nil {
				return nil, 0, err
			}
			if r.Changed || r.Unknown {
				return e.Statements, TTLAsRecorded, nil
			}
		}
		return e.Statements, TTLNone, nil
	}
	note := TTLNone
	expired := 0
	out := make([]engine.Statement, 0, len(e.Statements))
	for _, st := range e.Statements {
		r, err := ShortenTTL(st.CQL, st.Values, unset, ks, elapsed, tableTTL)
		if err != nil {
			return nil, 0, err
		}
		switch {
		case r.Unknown:
			note = TTLAsRecorded
		case r.Changed:
			note = max(note, TTLShortened)
		}
		if r.Expired {
			expired++
		}
		out = append(out, engine.Statement{CQL: r.CQL, Values: r.Values})
	}
	if expired == len(out) && note == TTLShortened {
		note = TTLExpired
	}
	return out, note, nil
}

// ApplyFunc sends one record and says what it did with its TTLs. It returns an error
// matching ErrNotIdempotent, without sending anything, for a record it refuses.
type ApplyFunc[B comparable] func(ctx context.Context, e *engine.OutcomeUnknownError[B], typ B) (TTLNote, error)

// Replay sends the records oldest first with apply and removes those applied (see the
// adapters' Replay).
func (o *Outbox[B]) Replay(ctx context.Context, rep *ReplayReport, apply ApplyFunc[B]) (int, error) {
	if rep == nil {
		rep = new(ReplayReport)
	}
	o.replayMu.Lock()
	defer o.replayMu.Unlock()
	recs, end, err := o.Snapshot()
	if err != nil {
		return 0, err
	}
	var errs []error
	var keep []RawRecord
	done := 0 // applied: removed
	for i, r := range recs {
		fail := func(err error) {
			errs = append(errs, fmt.Errorf("outbox: replay %d of %d: %w", i+1, len(recs), err))
		}
		if err := ctx.Err(); err != nil {
			fail(err)
			keep = append(keep, recs[i:]...)
			break
		}
		e, typ, err := o.d.DecodeRecord(r.payload)
		if err == nil {
			err = o.d.Replayable(e, typ)
		}
		var note TTLNote
		if err == nil {
			note, err = apply(ctx, e, typ)
			if err != nil && !errors.Is(err, engine.ErrNotIdempotent) {
				if o.d.Rejected != nil && o.d.Rejected(err) {
					// It will fail this way every time, and it holds no later record
					// back: each record carries its own timestamp, so the order records
					// are applied in does not change what Cassandra ends up holding.
					fail(err)
					rep.Rejected++
					keep = append(keep, r)
					continue
				}
				// Cassandra unreachable or failing: the next records would fail too.
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
		case TTLExpired:
			rep.Expired++
		case TTLShortened:
			rep.Shortened++
		case TTLAsRecorded:
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

// Replayable refuses a record that must not be sent again (Append stores none, Replay
// sends none).
func (d *Driver[B]) Replayable(e *engine.OutcomeUnknownError[B], typ B) error {
	if len(e.Statements) == 0 || (!e.Batch && len(e.Statements) != 1) {
		return fmt.Errorf("outbox: record with %d statement(s) (batch %v)", len(e.Statements), e.Batch)
	}
	if e.Batch && typ == d.Counter {
		return fmt.Errorf("%w: COUNTER batch", engine.ErrNotIdempotent)
	}
	if _, ok := d.BatchTypes[typ]; e.Batch && !ok {
		return fmt.Errorf("outbox: unknown batch type %v", typ)
	}
	// Without its original timestamp a replay would be stamped anew and could
	// overwrite a newer write.
	if e.Timestamp == 0 {
		return errors.New("outbox: record without a pinned timestamp")
	}
	return nil
}
