package tombstone

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/internal/cqltext"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/overwrite"
)

// List returns the row's tombstone records (deletes and undeletes), newest first.
func (st *Store) List(ctx context.Context, t *overwrite.Table, key any) ([]Record, error) {
	_, rowKey, err := rowKeyOf(t, key)
	if err != nil {
		return nil, err
	}
	return st.list(ctx, t, rowKey)
}

func (st *Store) list(ctx context.Context, t *overwrite.Table, rowKey []byte) ([]Record, error) {
	iter := st.s.Query(st.listCQL, tableName(t), rowKey).WithContext(ctx).Iter()
	var out []Record
	for {
		r := Record{Table: tableName(t)}
		var raw map[string][]byte
		if !iter.Scan(&r.ID, &r.CommandID, &r.Action, &r.At, &r.Timestamp, &raw, &r.WriteTimes) {
			break
		}
		vals, err := decodeValues(t, raw)
		if err != nil {
			iter.Close()
			return nil, err
		}
		r.Values = vals
		out = append(out, r)
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("tombstone: list: %w", err)
	}
	return out, nil
}

func decodeValues(t *overwrite.Table, raw map[string][]byte) (map[string]any, error) {
	vals := make(map[string]any, len(raw))
	for name, b := range raw {
		c, ok := t.Column(name)
		if !ok {
			return nil, fmt.Errorf("tombstone: recorded column %q no longer in %s", name, tableName(t))
		}
		p := c.Type.New()
		if err := gocql.Unmarshal(c.Type, b, p); err != nil {
			return nil, fmt.Errorf("tombstone: decode %s: %w", name, err)
		}
		vals[name] = cqlvalue.Deref(p)
	}
	return vals, nil
}

// Plan is what an Undelete would do, decided without writing anything.
type Plan struct {
	// Allowed is true when Undelete would restore the row now.
	Allowed bool
	// Reason says why not (ErrNoTombstone, ErrNotLastDelete, ErrRowExists) when not
	// Allowed.
	Reason error
	// Tombstone is the most recent record of the row (zero if none).
	Tombstone Record
	// Restore are the values Undelete would write.
	Restore map[string]any
	// Current are the row's values now (nil when the row does not exist).
	Current map[string]any
}

// Plan shows what Undelete(ctx, t, key, commandID) would do — the values it would
// restore and the row as it is now — so a person can decide before anything is applied.
func (st *Store) Plan(ctx context.Context, t *overwrite.Table, key any, commandID string) (Plan, error) {
	if commandID == "" {
		return Plan{}, ErrEmptyCommand
	}
	keyVals, rowKey, err := rowKeyOf(t, key)
	if err != nil {
		return Plan{}, err
	}
	recs, err := st.list(ctx, t, rowKey)
	if err != nil {
		return Plan{}, err
	}
	rs, err := st.readRow(ctx, t, keyVals)
	if err != nil {
		return Plan{}, err
	}
	var p Plan
	if rs.exists {
		p.Current = rs.values
	}
	switch {
	case len(recs) == 0:
		p.Reason = fmt.Errorf("%w: %s has no tombstone", ErrNoTombstone, tableName(t))
		return p, nil
	case recs[0].Action != ActionDelete:
		p.Tombstone = recs[0]
		p.Reason = fmt.Errorf("%w: the last record is an %s by %q", ErrNoTombstone, recs[0].Action, recs[0].CommandID)
		return p, nil
	}
	p.Tombstone = recs[0]
	p.Restore = recs[0].Values
	switch {
	case recs[0].CommandID != commandID:
		p.Reason = fmt.Errorf("%w: last deleted by %q at %v, not %q", ErrNotLastDelete, recs[0].CommandID, recs[0].At, commandID)
	case rs.exists:
		p.Reason = fmt.Errorf("%w: %s was recreated after the delete", ErrRowExists, tableName(t))
	default:
		p.Allowed = true
	}
	return p, nil
}

// Undelete restores the row deleted by commandID, if and only if the row's most recent
// delete came from commandID and the row does not exist now. The restore is an INSERT …
// IF NOT EXISTS, so a row recreated meanwhile is never clobbered; the undelete is then
// recorded. Otherwise the error says why: ErrNoTombstone (nothing to undo, or already
// undone), ErrNotLastDelete, ErrRowExists. It returns the restored record.
func (st *Store) Undelete(ctx context.Context, t *overwrite.Table, key any, commandID string) (Record, error) {
	p, err := st.Plan(ctx, t, key, commandID)
	if err != nil {
		return Record{}, err
	}
	if !p.Allowed {
		return p.Tombstone, p.Reason
	}
	keyVals, rowKey, err := rowKeyOf(t, key)
	if err != nil {
		return Record{}, err
	}
	cols := []string{}
	marks := []string{}
	args := []any{}
	for i, c := range t.KeyColumns() {
		cols, marks, args = append(cols, cqltext.Quote(c.Name)), append(marks, "?"), append(args, keyVals[i])
	}
	for name, v := range p.Restore {
		cols, marks, args = append(cols, cqltext.Quote(name)), append(marks, "?"), append(args, v)
	}
	ins := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s) IF NOT EXISTS", cqltext.QuoteQualified(t.Keyspace, t.Name),
		strings.Join(cols, ", "), strings.Join(marks, ", "))
	applied, err := st.s.Query(ins, args...).WithContext(ctx).MapScanCAS(map[string]any{})
	if err != nil {
		return p.Tombstone, fmt.Errorf("tombstone: restore %s: %w", tableName(t), err)
	}
	if !applied {
		return p.Tombstone, fmt.Errorf("%w: %s was recreated before the restore", ErrRowExists, tableName(t))
	}
	now := st.cfg.now()
	rec := Record{Table: tableName(t), ID: clientid.NewTimeUUID(now), CommandID: commandID, Action: ActionUndelete,
		At: now.UTC().Truncate(time.Millisecond), Timestamp: p.Tombstone.Timestamp, Values: p.Restore}
	q := st.s.Query(st.insertCQL, rec.Table, rowKey, rec.ID, commandID, ActionUndelete, rec.At, rec.Timestamp,
		map[string][]byte{}, map[string]int64{}, int(st.cfg.ttl/time.Second))
	if err := st.cfg.policy.Exec(ctx, q); err != nil {
		return rec, fmt.Errorf("tombstone: row restored, but recording the undelete failed: %w", err)
	}
	return rec, nil
}

// Untidy is a state Reconcile found.
type Untidy struct {
	Table  string
	RowKey []byte
	Key    []any  // decoded primary key
	Kind   string // "recreated": the row is live although its last record is a delete
	Last   Record
}

// Report is what Reconcile found and did.
type Report struct {
	Scanned int // tombstone rows read
	Rows    int // distinct deleted rows of the table
	Untidy  []Untidy
	Cleaned int // untidy rows whose tombstones were removed (fix only)
}

// Reconcile scans the tombstone table for t's rows and reports untidy states left by
// races: rows that are live again although their last record is a delete (recreated
// after the delete; their tombstone can no longer be undone and only confuses). With fix
// it removes those rows' tombstone records. It reads the whole tombstone table
// (paged): run it from an operator tool, not a request path.
func (st *Store) Reconcile(ctx context.Context, t *overwrite.Table, fix bool) (Report, error) {
	var rep Report
	if t == nil {
		return rep, errors.New("tombstone: nil table")
	}
	name := tableName(t)
	iter := st.s.Query(st.scanCQL).WithContext(ctx).PageSize(1000).Iter()
	seen := map[string]bool{}
	var keys [][]byte
	var tn, action string
	var rk []byte
	var id gocql.UUID
	for iter.Scan(&tn, &rk, &id, &action) {
		rep.Scanned++
		if tn != name || seen[string(rk)] {
			continue
		}
		seen[string(rk)] = true
		keys = append(keys, append([]byte(nil), rk...))
	}
	if err := iter.Close(); err != nil {
		return rep, fmt.Errorf("tombstone: scan: %w", err)
	}
	rep.Rows = len(keys)
	for _, rk := range keys {
		recs, err := st.list(ctx, t, rk)
		if err != nil {
			return rep, err
		}
		if len(recs) == 0 || recs[0].Action != ActionDelete {
			continue
		}
		keyVals, err := decodeKey(t, rk)
		if err != nil {
			return rep, err
		}
		rs, err := st.readRow(ctx, t, keyVals)
		if err != nil {
			return rep, err
		}
		if !rs.exists {
			continue
		}
		rep.Untidy = append(rep.Untidy, Untidy{Table: name, RowKey: rk, Key: keyVals, Kind: "recreated", Last: recs[0]})
		if fix {
			if err := st.s.Query(st.cleanCQL, name, rk).WithContext(ctx).Exec(); err != nil {
				return rep, fmt.Errorf("tombstone: clean up: %w", err)
			}
			rep.Cleaned++
		}
	}
	return rep, nil
}

// decodeKey reverses Table.EncodeKey.
func decodeKey(t *overwrite.Table, b []byte) ([]any, error) {
	var out []any
	for _, c := range t.KeyColumns() {
		if len(b) < 4 {
			return nil, fmt.Errorf("tombstone: corrupt row key")
		}
		n := int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3])
		b = b[4:]
		if n > len(b) {
			return nil, fmt.Errorf("tombstone: corrupt row key")
		}
		p := c.Type.New()
		if err := gocql.Unmarshal(c.Type, b[:n], p); err != nil {
			return nil, fmt.Errorf("tombstone: decode key %s: %w", c.Name, err)
		}
		out = append(out, cqlvalue.Deref(p))
		b = b[n:]
	}
	return out, nil
}
