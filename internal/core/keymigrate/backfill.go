package keymigrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/wait"
)

// Progress reports a backfill's advance.
type Progress struct {
	RangesDone, RangesTotal int
	Rows                    int64 // rows copied in this run
	Writes                  int64 // INSERTs sent (one per distinct write time and TTL of a row)
	Elapsed                 time.Duration
}

// BackfillOption configures Backfill.
type BackfillOption func(*backfillConfig) error

type backfillConfig struct {
	ranges      int
	concurrency int
	inFlight    int
	pageSize    int
	rowsPerSec  float64
	checkpoint  string
	progress    func(Progress)
	dupCheck    bool
	afterRange  func(done int)
}

// defaults: 256 token ranges, 4 at a time, 16 rows in flight per range, pages of 1000
// rows, no throttle, no checkpoint file, duplicate keys checked.
func backfillDefaults() backfillConfig {
	return backfillConfig{ranges: 256, concurrency: 4, inFlight: defaultInFlight, pageSize: 1000, dupCheck: true}
}

// defaultInFlight is how many rows of one range are written at once by default.
const defaultInFlight = 16

// checkInFlight validates a rows-in-flight bound.
func checkInFlight(n int) error {
	if n < 1 || n > 1024 {
		return fmt.Errorf("keymigrate: %d rows in flight: want 1 to 1024", n)
	}
	return nil
}

// WithRanges splits the token ring into n ranges (the unit of work and of checkpoints).
func WithRanges(n int) BackfillOption {
	return func(c *backfillConfig) error {
		if n < 1 || n > 1<<20 {
			return fmt.Errorf("keymigrate: %d ranges", n)
		}
		c.ranges = n
		return nil
	}
}

// WithConcurrency bounds how many ranges are copied at once.
func WithConcurrency(n int) BackfillOption {
	return func(c *backfillConfig) error {
		if n < 1 || n > 256 {
			return fmt.Errorf("keymigrate: concurrency %d", n)
		}
		c.concurrency = n
		return nil
	}
}

// WithRowsInFlight bounds how many rows of one range are being written at once
// (default 16; 1 to 1024) while the scan reads on: a copy is bound by round trips, not
// by the scan. The load on the new table is up to WithConcurrency × n writes at once.
func WithRowsInFlight(n int) BackfillOption {
	return func(c *backfillConfig) error {
		if err := checkInFlight(n); err != nil {
			return err
		}
		c.inFlight = n
		return nil
	}
}

// WithPageSize sets rows per page of the scan.
func WithPageSize(n int) BackfillOption {
	return func(c *backfillConfig) error {
		if n < 1 {
			return fmt.Errorf("keymigrate: page size %d", n)
		}
		c.pageSize = n
		return nil
	}
}

// WithThrottle limits the copy to rowsPerSec rows per second overall.
func WithThrottle(rowsPerSec float64) BackfillOption {
	return func(c *backfillConfig) error {
		if rowsPerSec <= 0 {
			return fmt.Errorf("keymigrate: throttle %v", rowsPerSec)
		}
		c.rowsPerSec = rowsPerSec
		return nil
	}
}

// WithCheckpoint records finished ranges in path (written atomically after each range)
// and, when path exists, resumes from it. A checkpoint of another migration is
// ErrCheckpointMismatch.
func WithCheckpoint(path string) BackfillOption {
	return func(c *backfillConfig) error { c.checkpoint = path; return nil }
}

// WithProgress receives progress after each range.
func WithProgress(f func(Progress)) BackfillOption {
	return func(c *backfillConfig) error { c.progress = f; return nil }
}

// WithoutDuplicateCheck turns off the in-memory check that no two old rows map to one
// new key. The check keeps 16 bytes per row copied (about 16 MB per million rows);
// without it memory stays flat, and Verify's row counts still reveal duplicates.
func WithoutDuplicateCheck() BackfillOption {
	return func(c *backfillConfig) error { c.dupCheck = false; return nil }
}

// WithTestHookAfterRange calls f after each finished range with the number of ranges
// done: for tests that race writes against the backfill or stop it midway.
func WithTestHookAfterRange(f func(done int)) BackfillOption {
	return func(c *backfillConfig) error { c.afterRange = f; return nil }
}

type checkpoint struct {
	Migration string `json:"migration"`
	Old       string `json:"old"`
	New       string `json:"new"`
	Ranges    int    `json:"ranges"`
	Done      []int  `json:"done"`
}

// Backfill copies every row of the old table into the new one under its transformed
// key, each cell USING TIMESTAMP its original WRITETIME and with its remaining TTL (none:
// UNSET, so the new table's default applies), so newer dual-written values always win.
// It scans by token range, paged (memory does not grow with the table, apart from the
// duplicate check), copying WithConcurrency ranges at a time, and returns the progress
// of this run. Non-frozen collections are copied whole at their MAXWRITETIME, with the
// longest of their elements' TTLs (none when any element has none); a non-frozen list
// only when the new table does not hold it at that time or later (see
// the package doc). Before Cassandra 5.0, which cannot read a non-frozen collection's or
// UDT's write times or TTLs, a table with one is a *table.UnsupportedError
// (table.ErrUnsupported) naming the column, returned before anything is read or
// written; other column types copy as on 5.0.
func (m *Migration[TI, U]) Backfill(ctx context.Context, opts ...BackfillOption) (Progress, error) {
	c := backfillDefaults()
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&c); err != nil {
			return Progress{}, err
		}
	}
	// Before anything is read: on Cassandra < 5.0 a non-frozen collection or UDT is
	// table.ErrUnsupported here.
	sc, err := m.scanner()
	if err != nil {
		return Progress{}, err
	}
	cp := checkpoint{Migration: m.ID, Old: m.old.Keyspace + "." + m.old.Name, New: m.new.Keyspace + "." + m.new.Name, Ranges: c.ranges}
	done := map[int]bool{}
	if c.checkpoint != "" {
		if b, err := os.ReadFile(c.checkpoint); err == nil {
			var got checkpoint
			if err := json.Unmarshal(b, &got); err != nil {
				return Progress{}, fmt.Errorf("%w: %s is not a checkpoint: %v", ErrCheckpointMismatch, c.checkpoint, err)
			}
			if got.Migration != cp.Migration || got.Old != cp.Old || got.New != cp.New || got.Ranges != cp.Ranges {
				return Progress{}, fmt.Errorf("%w: %s is for migration %q (%s → %s, %d ranges)", ErrCheckpointMismatch,
					c.checkpoint, got.Migration, got.Old, got.New, got.Ranges)
			}
			for _, r := range got.Done {
				done[r] = true
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			return Progress{}, fmt.Errorf("keymigrate: read checkpoint: %w", err)
		}
	}
	// The feeder reads this copy; workers update done under mu.
	resumed := make(map[int]bool, len(done))
	for r := range done {
		resumed[r] = true
	}
	start := time.Now()
	var mu sync.Mutex
	prog := Progress{RangesDone: len(done), RangesTotal: c.ranges}
	seen := map[uint64]uint64{}
	lim := newLimiter(c.rowsPerSec)

	work := make(chan int)
	errs := make(chan error, c.concurrency)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for w := 0; w < c.concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				rows, writes, err := m.copyRange(ctx, sc, c, r, lim, func(newKey, oldKey []byte) error {
					if !c.dupCheck {
						return nil
					}
					nk, ok := hash64(newKey), hash64(oldKey)
					mu.Lock()
					defer mu.Unlock()
					if prev, dup := seen[nk]; dup && prev != ok {
						return fmt.Errorf("%w: new key %x", ErrDuplicateKey, newKey)
					}
					seen[nk] = ok
					return nil
				}, nil)
				if err != nil {
					errs <- err
					cancel()
					return
				}
				mu.Lock()
				done[r] = true
				prog.RangesDone = len(done)
				prog.Rows += rows
				prog.Writes += writes
				prog.Elapsed = time.Since(start)
				p := prog
				var saveErr error
				if c.checkpoint != "" {
					saveErr = saveCheckpoint(c.checkpoint, cp, done)
				}
				mu.Unlock()
				if saveErr != nil {
					errs <- saveErr
					cancel()
					return
				}
				if c.progress != nil {
					c.progress(p)
				}
				if c.afterRange != nil {
					c.afterRange(p.RangesDone)
				}
			}
		}()
	}
feed:
	for r := 0; r < c.ranges; r++ {
		if resumed[r] {
			continue
		}
		select {
		case work <- r:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	close(errs)
	prog.Elapsed = time.Since(start)
	for err := range errs {
		return prog, err
	}
	if err := ctx.Err(); err != nil {
		return prog, err
	}
	return prog, nil
}

func hash64(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

func saveCheckpoint(path string, cp checkpoint, done map[int]bool) error {
	cp.Done = make([]int, 0, len(done))
	for r := range done {
		cp.Done = append(cp.Done, r)
	}
	slices.Sort(cp.Done)
	b, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".checkpoint-*")
	if err != nil {
		return fmt.Errorf("keymigrate: checkpoint: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("keymigrate: checkpoint: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("keymigrate: checkpoint: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// tokenRange returns the (lo, hi] bounds of range r of n over the Murmur3 ring.
func tokenRange(r, n int) (int64, int64) {
	step := math.MaxUint64 / uint64(n)
	minTok := int64(math.MinInt64)
	lo := int64(uint64(minTok) + uint64(r)*step)
	hi := int64(uint64(minTok) + uint64(r+1)*step)
	if r == n-1 {
		hi = math.MaxInt64
	}
	return lo, hi
}

// limiter spaces rows evenly at a rate (nil: unlimited).
type limiter struct {
	mu       sync.Mutex
	interval time.Duration
	next     time.Time
}

func newLimiter(perSec float64) *limiter {
	if perSec <= 0 {
		return nil
	}
	return &limiter{interval: time.Duration(float64(time.Second) / perSec)}
}

func (l *limiter) wait(ctx context.Context) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	now := time.Now()
	if l.next.Before(now) {
		l.next = now
	}
	at := l.next
	l.next = l.next.Add(l.interval)
	l.mu.Unlock()
	if d := time.Until(at); d > 0 {
		return wait.Sleep(ctx, d)
	}
	return nil
}
