package keymigrate

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/table"
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
	old, new  *table.Table
	transform Transform
	policy    *retry.Policy // its clock stamps dual writes and deletes

	values []string // non-key columns, shared by both tables, sorted
	lists  map[string]bool
}

// Option configures a Migration.
type Option func(*Migration) error

// WithRetryPolicy retries writes through p and stamps them with timestamps from p's
// clock (default retry.NewPolicy()). p must be valid (retry.Policy.Err).
func WithRetryPolicy(p *retry.Policy) Option {
	return func(m *Migration) error {
		if p == nil {
			return errors.New("keymigrate: nil retry policy")
		}
		if err := p.Err(); err != nil {
			return fmt.Errorf("keymigrate: %w", err)
		}
		m.policy = p
		return nil
	}
}

// New checks that old and new (described with table.Describe) have the same
// non-key columns with the same types, and returns the migration. id names it in
// checkpoints.
func New(s *gocql.Session, id string, old, new *table.Table, transform Transform, opts ...Option) (*Migration, error) {
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
	m := &Migration{ID: id, s: s, old: old, new: new, transform: transform,
		policy: retry.NewPolicy(), values: names(oldVals)}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(m); err != nil {
			return nil, err
		}
	}
	m.lists = map[string]bool{}
	for _, c := range oldVals {
		if isList(c) {
			m.lists[c.Name] = true
		}
	}
	return m, nil
}

// isList reports a non-frozen list: whole-list assignment of one is not idempotent
// (Cassandra keys each element by a TimeUUID from the server's clock, so a repeat at
// the same timestamp appends a second copy).
func isList(c table.Column) bool {
	return c.Collection && c.Type != nil && c.Type.Type() == gocql.TypeList
}

// valueColumns are the regular and static columns, by name.
func valueColumns(t *table.Table) []table.Column {
	out := append(slices.Clone(t.Static), t.Regular...)
	slices.SortFunc(out, func(a, b table.Column) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func names(cs []table.Column) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// newKey applies the transform and validates its result against the new table's key.
func (m *Migration) newKey(old map[string]any) ([]any, error) {
	nk, err := m.transform(old)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidKey, err)
	}
	for name := range nk {
		if c, ok := m.new.Column(name); !ok || (c.Role != table.PartitionKey && c.Role != table.ClusteringKey) {
			return nil, fmt.Errorf("%w: %q is not a key column of %s.%s", ErrInvalidKey, name, m.new.Keyspace, m.new.Name)
		}
	}
	vals, err := m.new.KeyValues(nk)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidKey, err)
	}
	return vals, nil
}

// absent reports "no value": nil, UNSET, or a nil pointer, slice, map or interface. Such
// values are bound as UNSET, never NULL: NULL would write a tombstone.
func absent(v any) bool {
	if v == nil || v == gocql.UnsetValue {
		return true
	}
	// Through pointers: gocql binds a pointer to a nil slice or map as NULL too.
	rv := reflect.ValueOf(v)
	for {
		switch rv.Kind() {
		case reflect.Slice, reflect.Map:
			return rv.IsNil()
		case reflect.Pointer, reflect.Interface:
			if rv.IsNil() {
				return true
			}
			rv = rv.Elem()
			continue
		}
		return false
	}
}

// nonEmpty reports whether a value given for a list column writes elements: anything
// but an absent value or an empty slice or array (which only clears the list).
func nonEmpty(v any) bool {
	if absent(v) {
		return false
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return false
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		return rv.Len() > 0
	}
	return true // a Marshaler or other form: assume it writes elements
}

// carriesList reports whether a row writes elements into a non-frozen list column.
func (m *Migration) carriesList(row map[string]any) bool {
	for name := range m.lists {
		if nonEmpty(row[name]) {
			return true
		}
	}
	return false
}

// listReason is why a write that carries a non-frozen list is not repeatable, whatever
// its text lets the policy judge: re-applying it would duplicate the list's elements.
const listReason = "carries a non-empty non-frozen list (a repeat appends another copy)"

// rowArgs orders a row's values for t.Insert: every column, absent ones UNSET. Not
// t.Values: a dual write is an upsert, where an empty non-frozen collection clears the
// column (Values leaves it UNSET, right for an overwrite, whose delete clears it).
func rowArgs(t *table.Table, row map[string]any, key []any) []any {
	cols := t.Columns()
	args := make([]any, len(cols), len(cols)+1)
	nKey := len(t.PartitionKey) + len(t.Clustering)
	for i, c := range cols {
		if i < nKey && key != nil {
			args[i] = key[i]
			continue
		}
		v, ok := row[c.Name]
		if !ok || absent(v) {
			args[i] = gocql.UnsetValue
			continue
		}
		if vt, ok := c.Type.(cqlvalue.VectorType); ok {
			// gocql v1.7.0 marshals a vector only through a Marshaler: bind its bytes.
			// (Values checked that it encodes.)
			if b, err := cqlvalue.Marshal(vt, v); err == nil {
				v = cqlvalue.Raw(b)
			}
		}
		args[i] = v
	}
	return args
}

// DualWrite writes row (column → value; absent or nil columns, typed nil pointers
// included, are left untouched, never written as NULL) to the old table and, under its
// transformed key, to the new table, in one logged batch with the same pinned
// timestamp, which it returns. Retries re-send the same timestamp.
//
// A row that writes elements into a non-frozen list column is sent once and never
// retried (a repeat would duplicate the list): when its outcome is unknown the error is
// an *retry.OutcomeUnknownError that matches retry.ErrNotIdempotent. Read the row
// before writing it again.
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
	// A tuple column is bound element by element, and left out when not given.
	oldIns, oldArgs, err := m.old.InsertRow(table.UsingTimestamp, rowArgs(m.old, row, nil))
	if err != nil {
		return 0, err
	}
	newIns, newArgs, err := m.new.InsertRow(table.UsingTimestamp, rowArgs(m.new, row, key))
	if err != nil {
		return 0, err
	}
	ts := m.policy.Clock().Next()
	b := m.s.NewBatch(gocql.LoggedBatch)
	b.Query(oldIns, append(oldArgs, ts)...)
	b.Query(newIns, append(newArgs, ts)...)
	opts := []retry.ExecOption{retry.AtTimestamp(ts)}
	if m.carriesList(row) {
		opts = append(opts, retry.NotRepeatable(listReason))
	}
	err = m.policy.ExecBatch(ctx, m.s, b, opts...)
	if err != nil {
		return ts, fmt.Errorf("keymigrate: dual write: %w", err)
	}
	return ts, nil
}

// DualDelete deletes a row from the old table and, under its transformed key, from the
// new one, in one logged batch with one pinned timestamp, which it returns. Use it
// instead of deleting from the old table alone while dual writes are on: a row deleted
// only there lives on in the new table and comes back at cut-over.
//
// row holds the old table's primary key and every other column the Transform reads. A
// row with clustering columns is deleted as a row (static columns stay); without, the
// partition is deleted. The delete is idempotent and retried. A backfill copy of the
// row carries the source's older WRITETIME, so it never resurrects a deleted row.
func (m *Migration) DualDelete(ctx context.Context, row map[string]any) (int64, error) {
	oldKey, err := m.old.KeyValues(row)
	if err != nil {
		return 0, fmt.Errorf("keymigrate: dual delete: %w", err)
	}
	for name := range row {
		if _, ok := m.old.Column(name); !ok {
			return 0, fmt.Errorf("keymigrate: %s.%s has no column %q", m.old.Keyspace, m.old.Name, name)
		}
	}
	newKey, err := m.newKey(row)
	if err != nil {
		return 0, err
	}
	oldArgs, err := m.old.KeyArgs(oldKey)
	if err != nil {
		return 0, err
	}
	newArgs, err := m.new.KeyArgs(newKey)
	if err != nil {
		return 0, err
	}
	ts := m.policy.Clock().Next()
	b := m.s.NewBatch(gocql.LoggedBatch)
	b.Query(m.old.DeleteRow(), append([]any{ts}, oldArgs...)...)
	b.Query(m.new.DeleteRow(), append([]any{ts}, newArgs...)...)
	if err := m.policy.ExecBatch(ctx, m.s, b, retry.AtTimestamp(ts)); err != nil {
		return ts, fmt.Errorf("keymigrate: dual delete: %w", err)
	}
	return ts, nil
}
