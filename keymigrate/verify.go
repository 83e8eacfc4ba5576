package keymigrate

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/cqltext"
	"github.com/cqlsafe/cqlsafe/overwrite"
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

// VerifyOption configures Verify.
type VerifyOption func(*verifyConfig)

type verifyConfig struct {
	every  int
	ranges int
}

// WithSample compares every n-th old row instead of all (counts stay complete).
func WithSample(n int) VerifyOption {
	return func(c *verifyConfig) {
		if n > 0 {
			c.every = n
		}
	}
}

// Verify counts the rows of both tables and compares old rows' values with the new rows
// under their transformed keys (all of them, or a sample). It reports; it never fixes.
// Run it after the backfill with dual writes on: a row updated between the two reads can
// show as different and should be re-checked.
func (m *Migration) Verify(ctx context.Context, opts ...VerifyOption) (Report, error) {
	c := verifyConfig{every: 1, ranges: 64}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	var rep Report
	oldSel := selectAll(m.old)
	newCount := countQuery(m.new)
	newRead := readByKey(m.new, m.values)
	for r := 0; r < c.ranges; r++ {
		lo, hi := tokenRange(r, c.ranges)
		iter := m.s.Query(oldSel, lo, hi).WithContext(ctx).PageSize(1000).Iter()
		for {
			row := map[string]any{}
			if !iter.MapScan(row) {
				break
			}
			rep.OldRows++
			if (rep.OldRows-1)%int64(c.every) != 0 {
				continue
			}
			newKey, err := m.newKey(row)
			if err != nil {
				iter.Close()
				return rep, err
			}
			rep.Checked++
			scanned := map[string]any{}
			err = m.s.Query(newRead, newKey...).WithContext(ctx).MapScan(scanned)
			got := map[string]any{}
			for _, name := range m.values {
				got[name] = scanned[name]
			}
			oldVals := map[string]any{}
			for _, name := range m.values {
				oldVals[name] = row[name]
			}
			oldKey := make([]any, 0)
			for _, col := range m.old.KeyColumns() {
				oldKey = append(oldKey, row[col.Name])
			}
			switch {
			case errors.Is(err, gocql.ErrNotFound):
				rep.Missing++
				rep.add(Diff{Kind: "missing", OldKey: oldKey, NewKey: newKey, Old: oldVals})
			case err != nil:
				iter.Close()
				return rep, fmt.Errorf("keymigrate: verify read: %w", err)
			case !reflect.DeepEqual(normalize(oldVals), normalize(got)):
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

func (r *Report) add(d Diff) {
	if len(r.Diffs) < 100 {
		r.Diffs = append(r.Diffs, d)
	}
}

// normalize makes nil and empty values compare equal (MapScan returns zero values for
// nulls on one side and typed nils on the other).
func normalize(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		rv := reflect.ValueOf(v)
		if v == nil || rv.IsZero() || ((rv.Kind() == reflect.Slice || rv.Kind() == reflect.Map) && rv.Len() == 0) {
			continue
		}
		out[k] = v
	}
	return out
}

func partitionTokens(t *overwrite.Table) string {
	pk := make([]string, len(t.PartitionKey))
	for i, c := range t.PartitionKey {
		pk[i] = cqltext.Quote(c.Name)
	}
	return "token(" + strings.Join(pk, ", ") + ")"
}

func selectAll(t *overwrite.Table) string {
	tok := partitionTokens(t)
	return fmt.Sprintf("SELECT * FROM %s WHERE %s > ? AND %s <= ?", cqltext.QuoteQualified(t.Keyspace, t.Name), tok, tok)
}

func countQuery(t *overwrite.Table) string {
	tok := partitionTokens(t)
	return fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE %s > ? AND %s <= ?", cqltext.QuoteQualified(t.Keyspace, t.Name), tok, tok)
}

func readByKey(t *overwrite.Table, values []string) string {
	sel := make([]string, len(values))
	for i, v := range values {
		sel[i] = cqltext.Quote(v)
	}
	if len(sel) == 0 {
		sel = []string{cqltext.Quote(t.KeyColumns()[0].Name)}
	}
	var where []string
	for _, c := range t.KeyColumns() {
		where = append(where, cqltext.Quote(c.Name)+" = ?")
	}
	return fmt.Sprintf("SELECT %s FROM %s WHERE %s", strings.Join(sel, ", "), cqltext.QuoteQualified(t.Keyspace, t.Name), strings.Join(where, " AND "))
}
