package keymigrate

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
	"github.com/cqlsafe/cqlsafe/internal/core/table"
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

// Migration moves a table to a new key format; TI is the driver's type description, U
// its UUID.
type Migration[TI any, U ~[16]byte] struct {
	ID        string
	s         Session // its policy's clock stamps dual writes and deletes
	drv       table.Driver[TI]
	old, new  *table.Table[TI]
	transform Transform

	values []string // non-key columns, shared by both tables, sorted
	lists  map[string]bool
}

// New checks that old and new have the same non-key columns with the same types, and
// returns the migration (see the adapters' New). s is built with the chosen policy.
func New[TI any, U ~[16]byte](drv table.Driver[TI], s Session, id string, old, new *table.Table[TI], transform Transform) (*Migration[TI, U], error) {
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
		return nil, fmt.Errorf("keymigrate: old and new are the same table, %s.%s: a migration copies rows into another table, with the new key format", old.Keyspace, old.Name)
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
	m := &Migration[TI, U]{ID: id, s: s, drv: drv, old: old, new: new, transform: transform, values: names(oldVals)}
	m.lists = map[string]bool{}
	for _, c := range oldVals {
		if m.isList(c) {
			m.lists[c.Name] = true
		}
	}
	return m, nil
}

// isList reports a non-frozen list: whole-list assignment of one is not idempotent
// (Cassandra keys each element by a TimeUUID from the server's clock, so a repeat at
// the same timestamp appends a second copy).
func (m *Migration[TI, U]) isList(c table.Column[TI]) bool {
	return c.Collection && m.drv.TreeOf(c.Type).Kind == cqltype.List
}

// valueColumns are the regular and static columns, by name.
func valueColumns[TI any](t *table.Table[TI]) []table.Column[TI] {
	out := append(slices.Clone(t.Static), t.Regular...)
	slices.SortFunc(out, func(a, b table.Column[TI]) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func names[TI any](cs []table.Column[TI]) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// newKey applies the transform and validates its result against the new table's key.
func (m *Migration[TI, U]) newKey(old map[string]any) ([]any, error) {
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
func absent(v, unset any) bool {
	if v == nil || v == unset {
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
func nonEmpty(v, unset any) bool {
	if absent(v, unset) {
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
func (m *Migration[TI, U]) carriesList(row map[string]any) bool {
	for name := range m.lists {
		if nonEmpty(row[name], m.drv.Unset()) {
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
func rowArgs[TI any](drv table.Driver[TI], t *table.Table[TI], row map[string]any, key []any) []any {
	cols := t.Columns()
	args := make([]any, len(cols), len(cols)+1)
	nKey := len(t.PartitionKey) + len(t.Clustering)
	for i, c := range cols {
		if i < nKey && key != nil {
			args[i] = key[i]
			continue
		}
		v, ok := row[c.Name]
		if !ok || absent(v, drv.Unset()) {
			args[i] = drv.Unset()
			continue
		}
		// gocql v1.7.0 marshals a vector only through a Marshaler: the driver binds
		// its bytes. (Values checked that it encodes.)
		if b, err := drv.Bind(c.Type, v); err == nil {
			v = b
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
func (m *Migration[TI, U]) DualWrite(ctx context.Context, row map[string]any) (int64, error) {
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
	oldIns, oldArgs, err := m.old.InsertRow(table.UsingTimestamp, rowArgs(m.drv, m.old, row, nil))
	if err != nil {
		return 0, err
	}
	newIns, newArgs, err := m.new.InsertRow(table.UsingTimestamp, rowArgs(m.drv, m.new, row, key))
	if err != nil {
		return 0, err
	}
	ts := m.s.Clock().Next()
	why := ""
	if m.carriesList(row) {
		why = listReason
	}
	err = m.s.Batch(ctx, []Stmt{{oldIns, append(oldArgs, ts)}, {newIns, append(newArgs, ts)}}, ts, why)
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
func (m *Migration[TI, U]) DualDelete(ctx context.Context, row map[string]any) (int64, error) {
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
	ts := m.s.Clock().Next()
	if err := m.s.Batch(ctx, []Stmt{{m.old.DeleteRow(), append([]any{ts}, oldArgs...)}, {m.new.DeleteRow(), append([]any{ts}, newArgs...)}}, ts, ""); err != nil {
		return ts, fmt.Errorf("keymigrate: dual delete: %w", err)
	}
	return ts, nil
}
