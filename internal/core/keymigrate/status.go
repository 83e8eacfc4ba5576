package keymigrate

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Status is a backfill's progress as the lease table records it: what every worker,
// on any machine, has claimed and finished.
type Status struct {
	Migration      string
	Source, Target string // keyspace.table
	RangesTotal    int
	Done, Claimed  int // ranges finished; ranges under a live lease
	Free           int // ranges nobody holds: never claimed, released, or their lease expired
	// Rows is the number of rows the finishing claims of the done ranges copied.
	Rows int64
	// Copied counts the rows every claim copied, finished or not, as logged every 100
	// rows: Copied − Rows is the number of rows copied more than once (by a worker that
	// died, stopped or lost its lease, then again by another), short by less than 100
	// per claim that did not end cleanly. Copying a row twice leaves the same result as
	// once.
	Copied int64
	// Takeovers counts ranges claimed more than once.
	Takeovers int
	Owners    map[string]int // worker id → ranges it holds now
	Updated   time.Time      // the newest lease or log write
	Ranges    []RangeStatus
}

// RangeStatus is one range's lease.
type RangeStatus struct {
	Range     int
	State     string        // "free", "claimed" or "done"
	Owner     string        // the holder (claimed) or finisher (done)
	Rows      int64         // rows copied so far (claimed: as of the last renewal)
	LeaseLeft time.Duration // claimed: until the lease expires unless renewed
	Claims    int           // claims logged for the range
	UpdatedAt time.Time
}

// Complete reports whether every range is done.
func (s Status) Complete() bool { return s.RangesTotal > 0 && s.Done == s.RangesTotal }

// CopiedTwice is the number of rows copied more than once (Copied − Rows, at least 0).
func (s Status) CopiedTwice() int64 { return max(s.Copied-s.Rows, 0) }

func (s Status) String() string {
	return fmt.Sprintf("%d/%d ranges done, %d claimed, %d free; %d rows copied, %d more than once, %d takeovers",
		s.Done, s.RangesTotal, s.Claimed, s.Free, s.Rows, s.CopiedTwice(), s.Takeovers)
}

// Status reads the progress of the migration's multi-worker backfill (RunWorker) from
// its lease table (LeaseTable; the other options are checked and ignored). A migration
// no worker has started is ErrNotStarted.
func (m *Migration[TI, U]) Status(ctx context.Context, opts ...WorkerOption) (Status, error) {
	c, err := m.workerOptions(opts)
	if err != nil {
		return Status{}, err
	}
	l, err := newLeases(m.s, m.ID, c.leaseKeyspace, c.leaseTable)
	if err != nil {
		return Status{}, err
	}
	n, src, dst, err := l.readDescription(ctx)
	if err != nil {
		return Status{}, err
	}
	return l.status(ctx, n, src, dst)
}

func (l *leases) status(ctx context.Context, n int, src, dst string) (Status, error) {
	rows, err := l.read(ctx, n)
	if err != nil {
		return Status{}, err
	}
	st := Status{Migration: l.migration, Source: src, Target: dst, RangesTotal: n, Owners: map[string]int{},
		Ranges: make([]RangeStatus, n)}
	for i := range st.Ranges {
		st.Ranges[i] = RangeStatus{Range: i, State: "free"}
	}
	for _, r := range rows {
		if r.rng < 0 || r.rng >= n {
			continue
		}
		rs := &st.Ranges[r.rng]
		if r.updatedAt.After(st.Updated) {
			st.Updated = r.updatedAt
		}
		if r.attempt != "" {
			rs.Claims++
			st.Copied += r.rows
			continue
		}
		rs.Owner, rs.Rows, rs.UpdatedAt = r.owner, r.rows, r.updatedAt
		switch r.state {
		case stateDone:
			rs.State = stateDone
		case stateClaimed:
			rs.State = stateClaimed
			rs.LeaseLeft = time.Duration(r.ttl) * time.Second
		}
	}
	for _, rs := range st.Ranges {
		switch rs.State {
		case stateDone:
			st.Done++
			st.Rows += rs.Rows
		case stateClaimed:
			st.Claimed++
			st.Owners[rs.Owner]++
		default:
			st.Free++
		}
		if rs.Claims > 1 {
			st.Takeovers++
		}
	}
	return st, nil
}

// free returns the ranges of st nobody holds: first those claimed before (a dead or
// stopped worker's), so a takeover does not wait for the rest of the ring; then the
// others starting at from and wrapping around, so workers that start at different
// offsets rarely contend for one range.
func (s Status) free(from int) []int {
	var abandoned, fresh []int
	for i := range s.Ranges {
		r := s.Ranges[(from+i)%len(s.Ranges)]
		switch {
		case r.State != "free":
		case r.Claims > 0:
			abandoned = append(abandoned, r.Range)
		default:
			fresh = append(fresh, r.Range)
		}
	}
	return slices.Clip(append(abandoned, fresh...))
}
