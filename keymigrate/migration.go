package keymigrate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/internal/cqltext"
	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
)

// Sentinels; nothing is written when one is returned for bad input.
var (
	ErrColumnMismatch     = errors.New("keymigrate: tables have different non-key columns")
	ErrInvalidKey         = errors.New("keymigrate: transform returned an invalid key")
	ErrDuplicateKey       = errors.New("keymigrate: two old rows map to one new key")
	ErrCheckpointMismatch = errors.New("keymigrate: checkpoint belongs to another migration")
)

// Transform maps an old row (every column, by name) to the new table's key columns.
// It must be a pure function of the old row and must be injective.
type Transform func(old map[string]any) (newKey map[string]any, err error)

// Migration moves a table to a new key format.
type Migration struct {
	ID        string
	s         *gocql.Session
	old, new  *overwrite.Table
	transform Transform
	clock     *clientid.Clock
	policy    *retry.Policy

	values  []string // non-key columns, shared by both tables, sorted
	dualOld string   // INSERT into old with all columns, USING TIMESTAMP ?
	dualNew string
}

// Option configures a Migration.
type Option func(*Migration) error

// WithClock draws dual-write timestamps from c (default clientid.ProcessClock()).
func WithClock(c *clientid.Clock) Option {
	return func(m *Migration) error {
		if c == nil {
			return errors.New("keymigrate: nil clock")
		}
		m.clock = c
		return nil
	}
}

// WithRetryPolicy retries writes through p (default retry.NewPolicy()).
func WithRetryPolicy(p *retry.Policy) Option {
	return func(m *Migration) error {
		if p == nil {
			return errors.New("keymigrate: nil retry policy")
		}
		m.policy = p
		return nil
	}
}

// New checks that old and new (described with overwrite.Describe) have the same
// non-key columns with the same types, and returns the migration. id names it in
// checkpoints.
func New(s *gocql.Session, id string, old, new *overwrite.Table, transform Transform, opts ...Option) (*Migration, error) {
	switch {
	case s == nil:
		return nil, errors.New("keymigrate: nil session")
	case id == "":
		return nil, errors.New("keymigrate: empty migration id")
	case old == nil || new == nil:
		return nil, errors.New("keymigrate: nil table")
	case transform == nil:
		return nil, errors.New("keymigrate: nil transform")
	case old.Keyspace == new.Keyspace && old.Name == new.Name:
		return nil, fmt.Errorf("%w: old and new are the same table", ErrColumnMismatch)
	}
	oldVals, newVals := valueColumns(old), valueColumns(new)
	if !slices.Equal(names(oldVals), names(newVals)) {
		return nil, fmt.Errorf("%w: %s.%s has %v, %s.%s has %v", ErrColumnMismatch, old.Keyspace, old.Name, names(oldVals),
			new.Keyspace, new.Name, names(newVals))
	}
	for i := range oldVals {
		if oldVals[i].CQLType != newVals[i].CQLType {
			return nil, fmt.Errorf("%w: column %s is %s in the old table, %s in the new", ErrColumnMismatch, oldVals[i].Name, oldVals[i].CQLType, newVals[i].CQLType)
		}
	}
	m := &Migration{ID: id, s: s, old: old, new: new, transform: transform, clock: clientid.ProcessClock(),
		policy: retry.NewPolicy(), values: names(oldVals)}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(m); err != nil {
			return nil, err
		}
	}
	m.dualOld = insertAll(old)
	m.dualNew = insertAll(new)
	return m, nil
}

// valueColumns are the regular and static columns, by name.
func valueColumns(t *overwrite.Table) []overwrite.Column {
	out := append(slices.Clone(t.Static), t.Regular...)
	slices.SortFunc(out, func(a, b overwrite.Column) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func names(cs []overwrite.Column) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

func insertAll(t *overwrite.Table) string {
	cols := t.Columns()
	q := make([]string, len(cols))
	marks := make([]string, len(cols))
	for i, c := range cols {
		q[i], marks[i] = cqltext.Quote(c.Name), "?"
	}
	return fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s) USING TIMESTAMP ?", cqltext.QuoteQualified(t.Keyspace, t.Name),
		strings.Join(q, ", "), strings.Join(marks, ", "))
}

// newKey applies the transform and validates its result against the new table's key.
func (m *Migration) newKey(old map[string]any) ([]any, error) {
	nk, err := m.transform(old)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidKey, err)
	}
	for name := range nk {
		if c, ok := m.new.Column(name); !ok || (c.Role != overwrite.PartitionKey && c.Role != overwrite.ClusteringKey) {
			return nil, fmt.Errorf("%w: %q is not a key column of %s.%s", ErrInvalidKey, name, m.new.Keyspace, m.new.Name)
		}
	}
	vals, err := m.new.KeyValues(nk)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidKey, err)
	}
	return vals, nil
}

// rowArgs orders a row's values for insertAll(t): every column, absent ones UNSET.
func rowArgs(t *overwrite.Table, row map[string]any, key []any) []any {
	cols := t.Columns()
	args := make([]any, len(cols), len(cols)+1)
	nKey := len(t.PartitionKey) + len(t.Clustering)
	for i, c := range cols {
		if i < nKey && key != nil {
			args[i] = key[i]
			continue
		}
		v, ok := row[c.Name]
		if !ok || v == nil {
			args[i] = gocql.UnsetValue
			continue
		}
		args[i] = v
	}
	return args
}

// DualWrite writes row (column → value; absent or nil columns are left untouched, never
// written as NULL) to the old table and, under its transformed key, to the new table, in
// one logged batch with the same pinned timestamp. Retries re-send the same timestamp.
func (m *Migration) DualWrite(ctx context.Context, row map[string]any) (int64, error) {
	if _, err := m.old.KeyValues(row); err != nil {
		return 0, err
	}
	for name := range row {
		if _, ok := m.old.Column(name); !ok {
			return 0, fmt.Errorf("keymigrate: %s.%s has no column %q", m.old.Keyspace, m.old.Name, name)
		}
	}
	key, err := m.newKey(row)
	if err != nil {
		return 0, err
	}
	ts := m.clock.Next()
	b := m.s.NewBatch(gocql.LoggedBatch)
	b.Query(m.dualOld, append(rowArgs(m.old, row, nil), ts)...)
	b.Query(m.dualNew, append(rowArgs(m.new, row, key), ts)...)
	if err := m.policy.ExecBatchAt(ctx, m.s, b, ts); err != nil {
		return ts, fmt.Errorf("keymigrate: dual write: %w", err)
	}
	return ts, nil
}
