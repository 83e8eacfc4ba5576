package keymigrate

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/table"
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
	every  int
	ranges int
}

// WithSample compares every n-th old row instead of all (counts stay complete); n ≥ 1
// (1: every row, the default).
func WithSample(n int) VerifyOption {
	return func(c *verifyConfig) error {
		if n < 1 {
			return fmt.Errorf("keymigrate: sample every %d rows: want at least 1", n)
		}
		c.every = n
		return nil
	}
}

// Verify counts the rows of both tables and compares old rows' values with the new rows
// under their transformed keys (all of them, or a sample). NULL and a zero value (0,
// "", false, an empty frozen collection) are different values. It reports; it never
// fixes. Run it after the backfill with dual writes on: a row updated between the two
// reads can show as different and should be re-checked.
func (m *Migration) Verify(ctx context.Context, opts ...VerifyOption) (Report, error) {
	c := verifyConfig{every: 1, ranges: 64}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&c); err != nil {
			return Report{}, err
		}
	}
	var rep Report
	keyCols := m.old.KeyColumns()
	oldCols := slices.Clone(keyCols)
	for _, name := range m.values {
		col, _ := m.old.Column(name)
		oldCols = append(oldCols, col)
	}
	newVals := make([]table.Column, len(m.values))
	for i, name := range m.values {
		newVals[i], _ = m.new.Column(name)
	}
	oldNames := make([]string, len(oldCols))
	for i, c := range oldCols {
		oldNames[i] = c.Name
	}
	oldSel, err := m.old.ScanRange(table.CellValue, oldNames...)
	if err != nil {
		return rep, err
	}
	newCount := m.new.CountRange()
	newRead, err := m.new.SelectByKey(table.CellValue, m.values...)
	if err != nil {
		return rep, err
	}
	oldDest, oldVal := nullableDest(oldCols)
	newDest, newVal := nullableDest(newVals)
	if len(m.values) == 0 { // SelectByKey then reads the first partition key column
		newDest, newVal = nullableDest(m.new.PartitionKey[:1])
	}
	for r := 0; r < c.ranges; r++ {
		lo, hi := tokenRange(r, c.ranges)
		iter := m.s.Query(oldSel, lo, hi).WithContext(ctx).PageSize(1000).Idempotent(true).Iter()
		for iter.Scan(oldDest...) {
			rep.OldRows++
			if (rep.OldRows-1)%int64(c.every) != 0 {
				continue
			}
			// The transform sees what Backfill gives it: key and non-null columns.
			row := map[string]any{}
			oldKey := make([]any, 0, len(keyCols))
			oldVals := map[string]any{}
			for i, col := range oldCols {
				v := oldVal(i)
				if i < len(keyCols) {
					oldKey = append(oldKey, v)
				} else {
					oldVals[col.Name] = v
				}
				if v != nil {
					row[col.Name] = v
				}
			}
			newKey, err := m.newKey(row)
			if err != nil {
				iter.Close()
				return rep, err
			}
			rep.Checked++
			keyArgs, err := m.new.KeyArgs(newKey)
			if err != nil {
				iter.Close()
				return rep, err
			}
			err = m.s.Query(newRead, keyArgs...).WithContext(ctx).Idempotent(true).Scan(newDest...)
			got := map[string]any{}
			for i, name := range m.values {
				got[name] = newVal(i)
			}
			switch {
			case errors.Is(err, gocql.ErrNotFound):
				rep.Missing++
				rep.add(Diff{Kind: "missing", OldKey: oldKey, NewKey: newKey, Old: oldVals})
			case err != nil:
				iter.Close()
				return rep, fmt.Errorf("keymigrate: verify read: %w", err)
			case !reflect.DeepEqual(oldVals, got):
				rep.Different++
				rep.add(Diff{Kind: "different", OldKey: oldKey, NewKey: newKey, Old: oldVals, New: got})
			}
		}
		if err := iter.Close(); err != nil {
			return rep, fmt.Errorf("keymigrate: verify scan: %w", err)
		}
		var n int64
		if err := m.s.Query(newCount, lo, hi).WithContext(ctx).Scan(&n); err != nil {
			return rep, fmt.Errorf("keymigrate: count new rows: %w", err)
		}
		rep.NewRows += n
	}
	return rep, nil
}

// nullableDest returns scan destinations for cols that keep NULL apart from zero values
// (gocql scans NULL into a **T as a nil *T, into a *T as T's zero value), and a getter
// for column i's value: nil for NULL, else the value.
func nullableDest(cols []table.Column) ([]any, func(i int) any) {
	dest := make([]any, len(cols))
	for i, c := range cols {
		p, err := cqlvalue.New(c.Type)
		if err != nil {
			p = new(any) // a type gocql cannot name: scan it as whatever gocql decodes
		}
		dest[i] = reflect.New(reflect.TypeOf(p)).Interface()
	}
	return dest, func(i int) any {
		p := reflect.ValueOf(dest[i]).Elem() // the *T
		if p.IsNil() {
			return nil
		}
		return p.Elem().Interface()
	}
}

func (r *Report) add(d Diff) {
	if len(r.Diffs) < 100 {
		r.Diffs = append(r.Diffs, d)
	}
}
