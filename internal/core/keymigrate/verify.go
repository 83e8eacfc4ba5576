package keymigrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/cqlsafe/cqlsafe/internal/core/table"
)

// Diff is one difference Verify found.
type Diff struct {
	Kind   string // "missing": no row under the new key; "different": values differ
	OldKey []any
	NewKey []any
	Old    map[string]any // the old row's value columns
	New    map[string]any // the new row's (nil when missing)
}

// Report is what Verify found. It never changes either table.
type Report struct {
	OldRows, NewRows int64
	Checked          int64 // old rows whose new row was read and compared
	Missing          int64
	Different        int64
	// Diffs lists the first 100 differences.
	Diffs []Diff
}

// OK reports whether the tables agree: same row count and no differences found.
func (r Report) OK() bool { return r.OldRows == r.NewRows && r.Missing == 0 && r.Different == 0 }

func (r Report) String() string {
	s := fmt.Sprintf("old rows %d, new rows %d, checked %d, missing %d, different %d", r.OldRows, r.NewRows, r.Checked, r.Missing, r.Different)
	switch {
	case r.NewRows < r.OldRows:
		s += " (fewer new rows: duplicate new keys, or rows not copied yet)"
	case r.NewRows > r.OldRows:
		s += " (more new rows: rows deleted from the old table only, or written to the new one only)"
	}
	return s
}

// VerifyOption configures Verify. An invalid value is an error from Verify, before
// anything is read.
type VerifyOption func(*verifyConfig) error

type verifyConfig struct {
	every       int
	ranges      int
	concurrency int
}

// WithSample compares every n-th old row of each token range instead of all (counts
// stay complete); n ≥ 1 (1: every row, the default).
func WithSample(n int) VerifyOption {
	return func(c *verifyConfig) error {
		if n < 1 {
			return fmt.Errorf("keymigrate: sample every %d rows: want at least 1", n)
		}
		c.every = n
		return nil
	}
}

// WithVerifyConcurrency bounds how many token ranges Verify reads at once (default 8;
// 1 to 256). Each reads its old rows and the new row of each, one at a time.
func WithVerifyConcurrency(n int) VerifyOption {
	return func(c *verifyConfig) error {
		if n < 1 || n > 256 {
			return fmt.Errorf("keymigrate: verify concurrency %d: want 1 to 256", n)
		}
		c.concurrency = n
		return nil
	}
}

// Verify counts the rows of both tables and compares old rows' values with the new rows
// under their transformed keys (all of them, or a sample). NULL and a zero value (0,
// "", false, an empty frozen collection) are different values. It reports; it never
// fixes. Run it after the backfill with dual writes on: a row updated between the two
// reads can show as different and should be re-checked. Token ranges are read
// WithVerifyConcurrency at a time; Diffs are in token order whatever finished first.
func (m *Migration[TI, U]) Verify(ctx context.Context, opts ...VerifyOption) (Report, error) {
	c := verifyConfig{every: 1, ranges: 64, concurrency: 8}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&c); err != nil {
			return Report{}, err
		}
	}
	v, err := m.verifier()
	if err != nil {
		return Report{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reps := make([]Report, c.ranges)
	errs := make([]error, c.ranges)
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(c.concurrency, c.ranges); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				reps[r], errs[r] = v.verifyRange(ctx, r, c)
				if errs[r] != nil {
					cancel()
				}
			}
		}()
	}
feed:
	for r := 0; r < c.ranges; r++ {
		select {
		case work <- r:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	var rep Report
	for r := range reps {
		rep.OldRows += reps[r].OldRows
		rep.NewRows += reps[r].NewRows
		rep.Checked += reps[r].Checked
		rep.Missing += reps[r].Missing
		rep.Different += reps[r].Different
		for _, d := range reps[r].Diffs {
			rep.add(d)
		}
	}
	// The first error in token order; one caused by another's cancel comes later or is
	// the context's.
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return rep, err
		}
	}
	for _, err := range errs {
		if err != nil {
			return rep, err
		}
	}
	return rep, ctx.Err()
}

// verifier holds the statements and columns of a Verify.
type verifier[TI any, U ~[16]byte] struct {
	m        *Migration[TI, U]
	keyCols  []table.Column[TI]
	oldCols  []table.Column[TI]
	newVals  []table.Column[TI]
	oldSel   string
	newCount string
	newRead  string
}

func (m *Migration[TI, U]) verifier() (*verifier[TI, U], error) {
	v := &verifier[TI, U]{m: m, keyCols: m.old.KeyColumns()}
	v.oldCols = slices.Clone(v.keyCols)
	for _, name := range m.values {
		col, _ := m.old.Column(name)
		v.oldCols = append(v.oldCols, col)
	}
	v.newVals = make([]table.Column[TI], len(m.values))
	for i, name := range m.values {
		v.newVals[i], _ = m.new.Column(name)
	}
	oldNames := make([]string, len(v.oldCols))
	for i, c := range v.oldCols {
		oldNames[i] = c.Name
	}
	var err error
	if v.oldSel, err = m.old.ScanRange(table.CellValue, oldNames...); err != nil {
		return nil, err
	}
	v.newCount = m.new.CountRange()
	if v.newRead, err = m.new.SelectByKey(table.CellValue, m.values...); err != nil {
		return nil, err
	}
	return v, nil
}

// verifyRange verifies token range r: its old rows against the new table, and the
// count of new rows in it.
func (v *verifier[TI, U]) verifyRange(ctx context.Context, r int, c verifyConfig) (Report, error) {
	m := v.m
	var rep Report
	newCols := v.newVals
	if len(m.values) == 0 { // SelectByKey then reads the first partition key column
		newCols = m.new.PartitionKey[:1]
	}
	lo, hi := tokenRange(r, c.ranges)
	var ferr error
	err := m.s.Iter(ctx, v.oldSel, []any{lo, hi}, 1000, len(v.oldCols), func(cells [][]byte) bool {
		rep.OldRows++
		if (rep.OldRows-1)%int64(c.every) != 0 {
			return true
		}
		oldVal, err := m.decode(v.oldCols, cells)
		if err != nil {
			ferr = err
			return false
		}
		// The transform sees what Backfill gives it: key and non-null columns.
		row := map[string]any{}
		oldKey := make([]any, 0, len(v.keyCols))
		oldVals := map[string]any{}
		for i, col := range v.oldCols {
			val := oldVal(i)
			if i < len(v.keyCols) {
				oldKey = append(oldKey, val)
			} else {
				oldVals[col.Name] = val
			}
			if val != nil {
				row[col.Name] = val
			}
		}
		newKey, err := m.newKey(row)
		if err != nil {
			ferr = err
			return false
		}
		rep.Checked++
		keyArgs, err := m.new.KeyArgs(newKey)
		if err != nil {
			ferr = err
			return false
		}
		newCells, found, err := m.s.Row(ctx, v.newRead, keyArgs, len(newCols), false)
		var newVal func(int) any
		if err == nil && found {
			newVal, err = m.decode(newCols, newCells)
		}
		switch {
		case err != nil:
			ferr = fmt.Errorf("keymigrate: verify read: %w", err)
			return false
		case !found:
			rep.Missing++
			rep.add(Diff{Kind: "missing", OldKey: oldKey, NewKey: newKey, Old: oldVals})
			return true
		}
		got := map[string]any{}
		for i, name := range m.values {
			got[name] = newVal(i)
		}
		// The columns have the same types (New checks): compared as Cassandra returns
		// them, serialised. Decoded values would call NaN unequal to itself and a NULL
		// UDT field or tuple element equal to a zero one (the drivers decode it so).
		same := len(m.values) == 0 || len(newCells) == len(m.values)
		for i := range m.values {
			if !same {
				break
			}
			a, b := cells[len(v.keyCols)+i], newCells[i]
			same = bytes.Equal(a, b) && (a == nil) == (b == nil)
		}
		if !same {
			rep.Different++
			rep.add(Diff{Kind: "different", OldKey: oldKey, NewKey: newKey, Old: oldVals, New: got})
		}
		return true
	})
	if ferr != nil {
		return rep, ferr
	}
	if err != nil {
		return rep, fmt.Errorf("keymigrate: verify scan: %w", err)
	}
	cells, found, err := m.s.Row(ctx, v.newCount, []any{lo, hi}, 1, false)
	var n int64
	if err == nil && found {
		n, err = decodeBigint(cells[0])
	}
	if err != nil {
		return rep, fmt.Errorf("keymigrate: count new rows: %w", err)
	}
	rep.NewRows = n
	return rep, nil
}

// decode decodes the columns cols (one cell each) and returns a getter for column i's
// value: nil for NULL, else the value as the driver scans it (its bytes, bindable, when
// the driver has no Go type for it).
func (m *Migration[TI, U]) decode(cols []table.Column[TI], cells [][]byte) (func(i int) any, error) {
	if len(cells) != len(cols) {
		return nil, fmt.Errorf("keymigrate: verify: %d columns read, want %d", len(cells), len(cols))
	}
	vals := make([]any, len(cols))
	for i, c := range cols {
		if cells[i] == nil {
			continue
		}
		v, err := m.drv.Unmarshal(c.Type, cells[i])
		if err != nil {
			v = m.drv.RawOf(cells[i])
		}
		vals[i] = v
	}
	return func(i int) any { return vals[i] }, nil
}

func (r *Report) add(d Diff) {
	if len(r.Diffs) < 100 {
		r.Diffs = append(r.Diffs, d)
	}
}
