package keymigrate

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/clientid"
	"github.com/cqlsafe/cqlsafe/internal/core/wait"
)

// WorkerOption configures RunWorker and Status. An invalid value is an error from the
// call, before anything is sent.
type WorkerOption func(*workerConfig) error

type workerConfig struct {
	id            string
	leaseTTL      time.Duration
	ranges        int
	rowsPerSec    float64
	pageSize      int
	inFlight      int
	leaseKeyspace string // "": the old table's keyspace
	leaseTable    string
	progress      func(WorkerEvent)
}

// workerDefaults: a generated worker id (host-pid-random), a 60 s lease, 256 ranges,
// no throttle, pages of 1000 rows, 16 rows in flight, leases in keymigrate_leases in the old table's
// keyspace, no progress callback.
func workerDefaults() workerConfig {
	host, _ := os.Hostname()
	if host == "" {
		host = "worker"
	}
	u := clientid.NewRandom()
	return workerConfig{id: fmt.Sprintf("%s-%d-%s", host, os.Getpid(), uuidString(u)[:8]), leaseTTL: time.Minute,
		ranges: 256, pageSize: 1000, inFlight: defaultInFlight, leaseTable: "keymigrate_leases"}
}

// WorkerID names the worker in the lease table (default host-pid-random). Two workers
// must not share an id.
func WorkerID(id string) WorkerOption {
	return func(c *workerConfig) error {
		if id == "" || len(id) > 200 {
			return fmt.Errorf("keymigrate: worker id %q: want 1 to 200 bytes", id)
		}
		c.id = id
		return nil
	}
}

// WorkerLeaseTTL is how long a claim lives without renewal (default 60 s; whole seconds,
// 2 s to 24 h). The holder renews it every third of it; a worker that dies gives its
// range up to others this long after its last renewal.
func WorkerLeaseTTL(d time.Duration) WorkerOption {
	return func(c *workerConfig) error {
		if d < 2*time.Second || d > 24*time.Hour || d%time.Second != 0 {
			return fmt.Errorf("keymigrate: lease ttl %v: want whole seconds from 2s to 24h", d)
		}
		c.leaseTTL = d
		return nil
	}
}

// WorkerRanges splits the token ring into n ranges, the unit of claims (default 256).
// Every worker of a migration must use the same n: the first records it, and a worker
// started with another is refused (ErrCheckpointMismatch).
func WorkerRanges(n int) WorkerOption {
	return func(c *workerConfig) error {
		if n < 1 || n > 1<<16 {
			return fmt.Errorf("keymigrate: %d ranges: want 1 to 65536", n)
		}
		c.ranges = n
		return nil
	}
}

// WorkerRate throttles this worker to rowsPerSec rows per second (> 0; default none).
func WorkerRate(rowsPerSec float64) WorkerOption {
	return func(c *workerConfig) error {
		if !(rowsPerSec > 0) {
			return fmt.Errorf("keymigrate: rate %v rows/s: want more than 0", rowsPerSec)
		}
		c.rowsPerSec = rowsPerSec
		return nil
	}
}

// WorkerPageSize sets the rows per page of the range scan (default 1000).
func WorkerPageSize(n int) WorkerOption {
	return func(c *workerConfig) error {
		if n < 1 || n > 100_000 {
			return fmt.Errorf("keymigrate: page size %d", n)
		}
		c.pageSize = n
		return nil
	}
}

// WorkerRowsInFlight bounds how many rows of the range this worker copies are being
// written at once (default 16; 1 to 1024), while the scan reads on.
func WorkerRowsInFlight(n int) WorkerOption {
	return func(c *workerConfig) error {
		if err := checkInFlight(n); err != nil {
			return err
		}
		c.inFlight = n
		return nil
	}
}

// LeaseTable keeps the leases in keyspace.table (default: keymigrate_leases in the old
// table's keyspace). RunWorker creates it when it is missing; any number of migrations
// may share one.
func LeaseTable(keyspace, table string) WorkerOption {
	return func(c *workerConfig) error {
		if _, err := newLeases(nil, "", keyspace, table); err != nil {
			return err
		}
		c.leaseKeyspace, c.leaseTable = keyspace, table
		return nil
	}
}

// WorkerProgress receives the worker's events as they happen, on the worker's
// goroutine (a function shared by several workers must be safe for concurrent use).
func WorkerProgress(f func(WorkerEvent)) WorkerOption {
	return func(c *workerConfig) error { c.progress = f; return nil }
}

// WorkerEvent is one step of a worker.
type WorkerEvent struct {
	Worker string
	Range  int
	Kind   string // "claimed", "copied", "done", "lost" (another worker holds it now), "released"
	// Rows: for "copied", rows copied since the range's previous event; for "done",
	// the range's rows.
	Rows int64
}

// WorkerReport is what one RunWorker call did.
type WorkerReport struct {
	Worker   string
	Ranges   int   // ranges this worker finished
	Rows     int64 // rows it copied, in finished ranges and others
	Writes   int64 // INSERTs it sent
	Lost     int   // claims it lost: a renewal failed, another worker took the range over
	Released int   // claims it gave back when stopped
	Elapsed  time.Duration
}

func (m *Migration[TI, U]) workerOptions(opts []WorkerOption) (workerConfig, error) {
	c := workerDefaults()
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&c); err != nil {
			return c, err
		}
	}
	if c.leaseKeyspace == "" && m.old != nil {
		c.leaseKeyspace = m.old.Keyspace
	}
	return c, nil
}

// RunWorker joins the migration's backfill as one worker and returns when every range
// is done. Any number of workers, in any processes on any machines, may run at once:
// they share the work through a lease table in Cassandra (LeaseTable), one claim per
// token range:
//
//   - A worker claims a free range with a lightweight transaction (INSERT … IF NOT
//     EXISTS USING TTL), renews the lease every third of its TTL (UPDATE … IF lease =
//     the id it holds) while it copies the range as Backfill does — each cell USING
//     TIMESTAMP its WRITETIME, with its TTL, non-frozen lists only where the new table
//     does not hold them yet — and marks it done (an LWT by the holder; done has no TTL).
//   - A worker that dies stops renewing; its lease expires and another worker copies the
//     range again. A worker whose renewal fails stops copying that range. Copying a range
//     twice leaves the same rows, cells, write times and TTLs as copying it once.
//   - An LWT whose outcome is unknown (a timeout) is not re-sent but settled by a SERIAL
//     read (settle.LWT); one that cannot be settled counts as not applied: the lease
//     then expires by itself.
//   - A worker with nothing left to claim (every range done or held) reads the lease
//     table every second (an eighth of the lease TTL when shorter; with more than 1024
//     ranges, a second per 1024, up to a quarter of the TTL) until the migration is
//     complete or a lease it can take over expires. Reads that fail for a passing
//     reason are tried again for up to a lease TTL.
//   - When ctx is cancelled the worker stops, gives its lease back (so others need not
//     wait for the TTL) and returns ctx's error with its report.
//
// The first worker records the number of ranges and the two tables; a worker with
// other settings under the same migration ID is refused (ErrCheckpointMismatch).
// Progress lives in the lease table: Status reads it, and a worker started later
// resumes where the others are. Two old rows mapping to one new key within a range
// are ErrDuplicateKey; across ranges only Verify's row counts reveal them.
//
// The lease table is created when it is missing (CREATE TABLE IF NOT EXISTS). On a
// multi-node cluster, start one worker first, so that several clients do not create
// it at once.
func (m *Migration[TI, U]) RunWorker(ctx context.Context, opts ...WorkerOption) (rep WorkerReport, err error) {
	c, err := m.workerOptions(opts)
	if err != nil {
		return WorkerReport{}, err
	}
	rep.Worker = c.id
	l, err := newLeases(m.s, m.ID, c.leaseKeyspace, c.leaseTable)
	if err != nil {
		return rep, err
	}
	sc, err := m.scanner()
	if err != nil {
		return rep, err
	}
	start := time.Now()
	defer func() { rep.Elapsed = time.Since(start) }()
	if err := l.ensure(ctx); err != nil {
		return rep, err
	}
	src, dst := m.old.Keyspace+"."+m.old.Name, m.new.Keyspace+"."+m.new.Name
	if err := l.describe(ctx, c.ranges, src, dst); err != nil {
		return rep, err
	}
	w := &worker[TI, U]{m: m, c: c, l: l, sc: sc, lim: newLimiter(c.rowsPerSec), rep: &rep}
	w.bc = backfillDefaults()
	w.bc.ranges, w.bc.pageSize, w.bc.inFlight = c.ranges, c.pageSize, c.inFlight
	// A worker with nothing to claim reads the lease table this often, for a range to
	// be given back or a lease to expire, and to see the migration complete: the last
	// range's end is seen within this, so it is short while a read is small (up to
	// 1024 ranges); with more ranges, proportionally longer, up to a quarter lease.
	poll := min(max(c.leaseTTL/8, 250*time.Millisecond), time.Second)
	if c.ranges > 1024 {
		poll = max(poll, min(poll*time.Duration(c.ranges/1024), c.leaseTTL/4))
	}
	next := int(hash64([]byte(c.id)) % uint64(c.ranges)) // spread workers around the ring
	var failingSince time.Time
	for {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		st, err := l.status(ctx, c.ranges, src, dst)
		if err != nil {
			// A read that fails for a passing reason is tried again while the failures
			// last less than a lease TTL (at least 10 polls).
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			if time.Since(failingSince) > max(c.leaseTTL, 10*poll) || !m.s.Class(err).Retryable() && !schemaSettling(m.s, err) {
				return rep, err
			}
			if err := wait.Sleep(ctx, poll); err != nil {
				return rep, err
			}
			continue
		}
		failingSince = time.Time{}
		if st.Complete() {
			return rep, nil
		}
		took := false
		for _, r := range st.free(next) {
			lease := clientid.NewRandom()
			res, err := l.claimRange(ctx, r, c.id, lease, int(c.leaseTTL/time.Second))
			if ctx.Err() != nil {
				if l.giveBack(r, lease, res) {
					rep.Released++
				}
				return rep, ctx.Err()
			}
			if err != nil || res != lwtApplied {
				continue // taken by another worker, or the claim failed: try the next
			}
			if err := w.copy(ctx, r, lease); err != nil {
				return rep, err
			}
			took, next = true, r+1
			break
		}
		if !took {
			// Everything left is held by others: wait for them to finish or their
			// leases to expire.
			if err := wait.Sleep(ctx, poll); err != nil {
				return rep, err
			}
		}
	}
}

// worker is one RunWorker's state.
type worker[TI any, U ~[16]byte] struct {
	m   *Migration[TI, U]
	c   workerConfig
	l   *leases
	sc  scan[TI]
	bc  backfillConfig
	lim *limiter
	rep *WorkerReport
}

func (w *worker[TI, U]) event(r int, kind string, rows int64) {
	if w.c.progress != nil {
		w.c.progress(WorkerEvent{Worker: w.c.id, Range: r, Kind: kind, Rows: rows})
	}
}

// copy copies range r under the lease it just claimed, renewing it meanwhile, and marks
// the range done. Losing the lease is not an error (whoever holds it finishes the range);
// a copy error is, after the lease is given back.
func (w *worker[TI, U]) copy(ctx context.Context, r int, claim [16]byte) error {
	ttl := int(w.c.leaseTTL / time.Second)
	w.event(r, "claimed", 0)
	_ = w.l.logClaim(ctx, r, claim, w.c.id, stateClaimed, 0) // counts the claim even if this worker dies at once

	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		current = claim // the lease id the worker holds now
		lost    atomic.Bool
		copied  atomic.Int64
	)
	// The renewal runs until stop is closed, between renewals: a renewal in flight is
	// never cancelled at the end of the copy, or the lease id it moved to would be
	// unknown and the done mark refused. Only ctx (the worker stopping) cancels it.
	stop, renewed := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(renewed)
		lastOK := time.Now()
		every := w.c.leaseTTL / 3
		for {
			t := time.NewTimer(every)
			select {
			case <-stop:
				t.Stop()
				return
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			next := clientid.NewRandom()
			mu.Lock()
			old := current
			mu.Unlock()
			res, err := w.l.renewRange(ctx, r, w.c.id, old, next, copied.Load(), ttl)
			switch {
			case ctx.Err() != nil:
				return
			case res == lwtApplied:
				mu.Lock()
				current = next
				mu.Unlock()
				lastOK, every = time.Now(), w.c.leaseTTL/3
			case err != nil && time.Since(lastOK) < w.c.leaseTTL/2:
				every = time.Second // nothing applied (unavailable, overloaded): try again soon
			default:
				// Another worker holds it, the lease expired, or the renewal cannot be
				// settled: stop copying. Whoever holds the range copies it whole.
				lost.Store(true)
				cancel()
				return
			}
		}
	}()

	seen := map[uint64]uint64{} // new key → old key, within this range
	var logged int64
	check := func(newKey, oldKey []byte) error {
		nk, ok := hash64(newKey), hash64(oldKey)
		if prev, dup := seen[nk]; dup && prev != ok {
			return fmt.Errorf("%w: new key %x", ErrDuplicateKey, newKey)
		}
		seen[nk] = ok
		// Called before each row is written, on this goroutine: log the rows written so
		// far (copied counts them as their writes end) every logEvery.
		if n := copied.Load(); n-logged >= logEvery {
			_ = w.l.logClaim(rctx, r, claim, w.c.id, "copying", n) // statistics only: a failure does not stop the copy
			w.event(r, "copied", n-logged)
			logged = n
		}
		return nil
	}
	rows, writes, err := w.m.copyRange(rctx, w.sc, w.bc, r, w.lim, check, &copied)
	close(stop)
	<-renewed
	cancel()
	w.rep.Rows += rows
	w.rep.Writes += writes
	w.event(r, "copied", rows-logged)
	mu.Lock()
	held := current
	mu.Unlock()
	// Statistics and lease calls after the copy use ctx (rctx is cancelled), or a short
	// context of their own when ctx is done.
	after, done := ctx, func() {}
	if ctx.Err() != nil {
		after, done = context.WithTimeout(context.Background(), 10*time.Second)
	}
	defer done()
	switch {
	case lost.Load():
		w.rep.Lost++
		_ = w.l.logClaim(after, r, claim, w.c.id, "lost", rows)
		w.event(r, "lost", rows)
		return nil
	case err != nil:
		// Stopped (ctx) or failed: give the range back at once rather than after the TTL.
		state := "failed"
		if ctx.Err() != nil {
			state = "released"
		}
		_ = w.l.logClaim(after, r, claim, w.c.id, state, rows)
		if res, _ := w.l.releaseRange(after, r, held); res == lwtApplied {
			w.rep.Released++
			w.event(r, "released", rows)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	next := clientid.NewRandom()
	res, err := w.l.finishRange(ctx, r, w.c.id, held, next, rows)
	if res != lwtApplied {
		// The lease ran out just before: another worker copies the range again.
		w.rep.Lost++
		_ = w.l.logClaim(after, r, claim, w.c.id, "lost", rows)
		w.event(r, "lost", rows)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && !w.m.s.Class(err).Retryable() {
			return err
		}
		return nil
	}
	w.rep.Ranges++
	_ = w.l.logClaim(ctx, r, claim, w.c.id, stateDone, rows)
	w.event(r, "done", rows)
	return nil
}

// giveBack releases range r's lease when the worker was stopped as its claim ended:
// a claim that applied (or may have) would otherwise hold the range for a lease TTL.
// It uses a short context of its own (the worker's is done) and reports a release.
func (l *leases) giveBack(r int, lease [16]byte, claimed lwtResult) bool {
	if claimed == lwtNotApplied {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, _ := l.releaseRange(ctx, r, lease)
	return res == lwtApplied
}
