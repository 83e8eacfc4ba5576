package tombstone

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/clientid"
	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/internal/core/table"
	"github.com/cqlsafe/cqlsafe/internal/core/value"
	"github.com/cqlsafe/cqlsafe/internal/core/wait"
)

// List returns the row's tombstone records (deletes and undeletes), newest first.
func (st *Store[TI, U, P]) List(ctx context.Context, t *table.Table[TI], key any) ([]Record[U], error) {
	_, rowKey, err := rowKeyOf(t, key)
	if err != nil {
		return nil, err
	}
	return st.list(ctx, t, rowKey)
}

func (st *Store[TI, U, P]) list(ctx context.Context, t *table.Table[TI], rowKey []byte) ([]Record[U], error) {
	var out []Record[U]
	var derr error
	err := st.s.Records(ctx, st.listCQL, []any{tableName(t), rowKey}, func(row RecordRow[U]) {
		if derr != nil {
			return
		}
		r := Record[U]{Table: tableName(t), ID: row.ID, CommandID: row.CommandID, Action: row.Action, At: row.At,
			Timestamp: row.Timestamp, written: row.Written}
		r.WriteTimes, r.Expires = splitTimes(row.Times)
		raw := row.Values
		for name, b := range raw {
			if b == nil {
				// The drivers read an empty map value as nil; the record holds no NULLs
				// (null cells are not recorded), so it is an empty value, e.g. a blob 0x.
				raw[name] = []byte{}
			}
		}
		vals, err := st.decodeValues(t, raw)
		if err != nil {
			derr = err
			return
		}
		r.Values, r.raw = vals, raw
		out = append(out, r)
		// A delete seen is a write seen: later writes of this process to the row are
		// stamped above it (clientid.Clock.Observe).
		st.s.Clock().Observe(r.Timestamp)
	})
	if derr != nil {
		return nil, derr
	}
	if err != nil {
		return nil, fmt.Errorf("tombstone: list: %w", err)
	}
	return out, nil
}

// splitTimes separates the record's write times from the expiries stored beside them.
func splitTimes(times map[string]int64) (map[string]int64, map[string]time.Time) {
	wts, exps := make(map[string]int64, len(times)), map[string]time.Time{}
	for k, v := range times {
		if name, ok := strings.CutPrefix(k, expiresKey); ok {
			exps[name] = time.Unix(v, 0).UTC()
		} else {
			wts[k] = v
		}
	}
	return wts, exps
}

func (st *Store[TI, U, P]) decodeValues(t *table.Table[TI], raw map[string][]byte) (map[string]any, error) {
	vals := make(map[string]any, len(raw))
	for name, b := range raw {
		c, ok := t.Column(name)
		if !ok {
			return nil, fmt.Errorf("tombstone: recorded column %q no longer in %s", name, tableName(t))
		}
		v, err := st.drv.Unmarshal(c.Type, b)
		if err != nil {
			v = st.drv.RawOf(b) // no Go type for it (e.g. a vector inside a UDT): its bytes
		}
		vals[name] = v
	}
	return vals, nil
}

// Plan is what an Undelete would do, decided without writing anything.
type Plan[U ~[16]byte] struct {
	// Allowed is true when Undelete would restore the row now.
	Allowed bool
	// Reason says why not (ErrNoTombstone, ErrNotLastDelete, ErrRowExists) when not
	// Allowed.
	Reason error
	// Tombstone is the most recent record of the row (zero if none).
	Tombstone Record[U]
	// Restore are the values Undelete would write: the recorded ones that would not
	// have expired by now.
	Restore map[string]any
	// RestoreTTL is the TTL each restored cell would get, what it had left (absent: no
	// TTL, even on a table with a default TTL).
	RestoreTTL map[string]time.Duration
	// Current are the row's values now (nil when the row does not exist).
	Current map[string]any

	restoreRaw map[string][]byte // Restore serialised, as read by the delete
}

// Plan shows what Undelete(ctx, t, key, commandID) would do — the values it would
// restore and the row as it is now — so a person can decide before anything is applied.
// Before Cassandra 5.0 a table with a non-frozen collection or UDT is
// table.ErrUnsupported, as for Delete (and so for Undelete and Reconcile).
func (st *Store[TI, U, P]) Plan(ctx context.Context, t *table.Table[TI], key any, commandID string) (Plan[U], error) {
	if commandID == "" {
		return Plan[U]{}, ErrEmptyCommand
	}
	keyVals, rowKey, err := rowKeyOf(t, key)
	if err != nil {
		return Plan[U]{}, err
	}
	if _, err := readCQL(t); err != nil { // before anything is read: see Delete
		return Plan[U]{}, err
	}
	recs, err := st.list(ctx, t, rowKey)
	if err != nil {
		return Plan[U]{}, err
	}
	rs, err := st.readRow(ctx, t, keyVals, false)
	if err != nil {
		return Plan[U]{}, err
	}
	var p Plan[U]
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
	p.Restore, p.RestoreTTL, p.restoreRaw = map[string]any{}, map[string]time.Duration{}, map[string][]byte{}
	now := st.cfg.Now().Unix()
	for name, v := range recs[0].Values {
		exp, ok := recs[0].Expires[name]
		if !ok {
			p.Restore[name], p.restoreRaw[name] = v, recs[0].raw[name]
			continue
		}
		if left := exp.Unix() - now; left > 0 { // an expired cell would be gone by now
			p.Restore[name], p.RestoreTTL[name], p.restoreRaw[name] = v, time.Duration(left)*time.Second, recs[0].raw[name]
		}
	}
	switch {
	case recs[0].CommandID != commandID:
		p.Reason = fmt.Errorf("%w: last deleted by %q at %v, not %q", ErrNotLastDelete, recs[0].CommandID, recs[0].At, commandID)
	case rs.exists:
		p.Reason = fmt.Errorf("%w: %s was recreated after the delete", ErrRowExists, tableName(t))
	case len(p.Restore) == 0 && len(recs[0].Values) > 0:
		p.Reason = fmt.Errorf("%w: every cell of %s deleted by %q would have expired by now", ErrNoTombstone, tableName(t), commandID)
	default:
		p.Allowed = true
	}
	return p, nil
}

// Undelete: see the adapters' Store.Undelete.
func (st *Store[TI, U, P]) Undelete(ctx context.Context, t *table.Table[TI], key any, commandID string) (Record[U], error) {
	p, err := st.Plan(ctx, t, key, commandID)
	if err != nil {
		return Record[U]{}, err
	}
	if !p.Allowed {
		return p.Tombstone, p.Reason
	}
	keyVals, rowKey, err := rowKeyOf(t, key)
	if err != nil {
		return Record[U]{}, err
	}
	stmts, err := st.restoreBatch(t, keyVals, p)
	if err != nil {
		return p.Tombstone, err
	}
	sent := time.Now()
	applied, err := st.s.CAS(ctx, stmts)
	name := tableName(t)
	switch {
	case err != nil:
		// Unavailable too: Paxos can report it at the commit phase, after a quorum
		// accepted the proposal, which a later round then completes.
		if !st.s.MayHaveApplied(err) {
			return p.Tombstone, fmt.Errorf("tombstone: restore %s: %w", name, err)
		}
		if err := st.settle(ctx, t, keyVals, p, sent, err); err != nil {
			return p.Tombstone, err
		}
	case !applied:
		return p.Tombstone, &RestoreError{Table: name, Err: ErrRowExists, Detail: "recreated before the restore"}
	default:
		if err := st.verify(ctx, t, keyVals, p); err != nil {
			return p.Tombstone, err
		}
	}
	now := st.cfg.Now()
	rec := Record[U]{Table: name, ID: U(clientid.NewTimeUUID(now)), CommandID: commandID, Action: ActionUndelete,
		At: now.UTC().Truncate(time.Millisecond), Timestamp: p.Tombstone.Timestamp, Values: p.Restore}
	if err := st.s.Exec(ctx, st.insertCQL, []any{rec.Table, rowKey, rec.ID, commandID, ActionUndelete, rec.At, rec.Timestamp,
		map[string][]byte{}, map[string]int64{}, int(st.cfg.TTL / time.Second)}); err != nil {
		return rec, fmt.Errorf("tombstone: row restored, but recording the undelete failed: %w", err)
	}
	return rec, nil
}

// restoreBatch is the conditional batch that restores p: the INSERT … IF NOT EXISTS
// carries the key and the cells with the longest TTL (so the row marker lives as long
// as the longest-lived cell), an UPDATE per other TTL the rest. Every group binds its
// TTL, 0 included: UNSET would give cells that had none the table's default TTL.
func (st *Store[TI, U, P]) restoreBatch(t *table.Table[TI], keyVals []any, p Plan[U]) ([]Stmt, error) {
	groups := map[int][]string{} // TTL seconds (0: none) → columns
	for name := range p.Restore {
		ttl := int(p.RestoreTTL[name] / time.Second)
		groups[ttl] = append(groups[ttl], name)
	}
	ttls := make([]int, 0, len(groups))
	for ttl, names := range groups {
		slices.Sort(names)
		ttls = append(ttls, ttl)
	}
	// Longest first; no TTL is the longest.
	life := func(ttl int) int {
		if ttl == 0 {
			return math.MaxInt
		}
		return ttl
	}
	slices.SortFunc(ttls, func(a, b int) int { return cmp.Compare(life(b), life(a)) })
	if len(ttls) == 0 {
		ttls = []int{0} // a row with only key columns
	}
	q := cqltext.QuoteQualified(t.Keyspace, t.Name)
	var b []Stmt // one partition: one mutation, no batch log
	// Cells are bound as the delete read them (the driver's Raw): restored byte for byte.
	rawOf := func(names []string) []any {
		out := make([]any, len(names))
		for i, name := range names {
			out[i] = st.drv.RawOf(p.restoreRaw[name])
		}
		return out
	}
	var names []string
	for _, c := range t.KeyColumns() {
		names = append(names, c.Name)
	}
	names = append(names, groups[ttls[0]]...)
	args, err := t.Args(names, append(slices.Clone(keyVals), rawOf(groups[ttls[0]])...))
	if err != nil {
		return nil, err
	}
	cols, marks := make([]string, len(names)), make([]string, len(names))
	for i, name := range names {
		c, _ := t.Column(name)
		cols[i], marks[i] = cqltext.Quote(name), c.Marker()
	}
	b = append(b, Stmt{fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s) IF NOT EXISTS USING TTL ?", q,
		strings.Join(cols, ", "), strings.Join(marks, ", ")), append(args, ttls[0])})
	keyArgs, err := t.KeyArgs(keyVals)
	if err != nil {
		return nil, err
	}
	for _, ttl := range ttls[1:] {
		vals, err := t.Args(groups[ttl], rawOf(groups[ttl]))
		if err != nil {
			return nil, err
		}
		upd, err := t.Update(table.UsingTTL, groups[ttl]...)
		if err != nil {
			return nil, err
		}
		b = append(b, Stmt{upd, append(append([]any{ttl}, vals...), keyArgs...)})
	}
	return b, nil
}

// verify checks, after the LWT said applied, that the restored row is visible: a delete
// stamped after the Paxos ballot (the LWT's write timestamp) shadows it otherwise.
func (st *Store[TI, U, P]) verify(ctx context.Context, t *table.Table[TI], keyVals []any, p Plan[U]) error {
	name := tableName(t)
	rs, err := st.readRow(ctx, t, keyVals, true)
	if err != nil {
		return &RestoreError{Table: name, Err: ErrRestoreUnknown, Detail: "applied, but the read that checks it is visible failed", Cause: err}
	}
	for col := range p.Restore {
		if _, ok := rs.values[col]; !ok || !rs.exists {
			return &RestoreError{Table: name, Err: ErrRestoreShadowed,
				Detail: fmt.Sprintf("the restore applied but %s is not visible: a delete at or after the restore's timestamp shadows it (the delete was at %d)", col, p.Tombstone.Timestamp)}
		}
	}
	return nil
}

// settle decides a restore whose reply was lost: restored (nil) or a *RestoreError.
func (st *Store[TI, U, P]) settle(ctx context.Context, t *table.Table[TI], keyVals []any, p Plan[U], sent time.Time, cause error) error {
	name := tableName(t)
	if err := wait.Sleep(ctx, time.Until(sent.Add(st.cfg.Settle))); err != nil {
		return &RestoreError{Table: name, Err: ErrRestoreUnknown, Detail: "reply lost, and no time left to settle it", Cause: cause}
	}
	// A SERIAL read completes an accepted Paxos proposal or fences it out.
	rs, err := st.readRow(ctx, t, keyVals, true)
	if err != nil {
		return &RestoreError{Table: name, Err: ErrRestoreUnknown, Detail: "reply lost, and the SERIAL read that settles it failed: " + err.Error(), Cause: cause}
	}
	if !rs.exists {
		return &RestoreError{Table: name, Err: ErrNotRestored, Detail: "reply lost; a SERIAL read finds no row", Cause: cause}
	}
	for col, want := range p.Restore {
		if got, ok := rs.values[col]; !ok || !value.Equal(got, want) {
			return &RestoreError{Table: name, Err: ErrRowExists,
				Detail: fmt.Sprintf("reply lost; the row exists with %s other than restored", col), Cause: cause}
		}
	}
	return nil
}

// Untidy is a state Reconcile found.
type Untidy[U ~[16]byte] struct {
	Table  string
	RowKey []byte
	Key    []any  // decoded primary key
	Kind   string // "recreated": the row is live although its last record is a delete
	Last   Record[U]
}

// Report is what Reconcile found and did.
type Report[U ~[16]byte] struct {
	Scanned int // tombstone rows read
	Rows    int // distinct deleted rows of the table
	Untidy  []Untidy[U]
	Cleaned int // untidy rows whose tombstones were removed (fix only)
}

// Reconcile: see the adapters' Store.Reconcile.
func (st *Store[TI, U, P]) Reconcile(ctx context.Context, t *table.Table[TI], fix bool) (Report[U], error) {
	var rep Report[U]
	if t == nil {
		return rep, errors.New("tombstone: nil table")
	}
	if _, err := readCQL(t); err != nil { // before anything is read: see Delete
		return rep, err
	}
	name := tableName(t)
	seen := map[string]bool{}
	var keys [][]byte
	err := st.s.Keys(ctx, st.scanCQL, func(tn string, rk []byte) {
		rep.Scanned++
		if tn != name || seen[string(rk)] {
			return
		}
		seen[string(rk)] = true
		keys = append(keys, append([]byte(nil), rk...))
	})
	if err != nil {
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
		keyVals, err := t.DecodeKey(rk)
		if err != nil {
			return rep, err
		}
		rs, err := st.readRow(ctx, t, keyVals, false)
		if err != nil {
			return rep, err
		}
		if !rs.exists {
			continue
		}
		rep.Untidy = append(rep.Untidy, Untidy[U]{Table: name, RowKey: rk, Key: keyVals, Kind: "recreated", Last: recs[0]})
		if fix {
			// One partition: one mutation. Each record is deleted at its own write time,
			// never at "now", which would shadow a record written meanwhile by a clock
			// behind this one. Pinned timestamps make the batch safe to retry.
			stmts := make([]Stmt, 0, len(recs))
			for _, r := range recs {
				stmts = append(stmts, Stmt{st.cleanCQL, []any{r.written, name, rk, r.ID}})
			}
			if err := st.s.Batch(ctx, false, stmts); err != nil {
				return rep, fmt.Errorf("tombstone: clean up: %w", err)
			}
			rep.Cleaned++
		}
	}
	return rep, nil
}
