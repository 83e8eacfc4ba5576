package tombstone

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/clientid"
	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/internal/core/table"
	"github.com/cqlsafe/cqlsafe/internal/core/value"
	"github.com/cqlsafe/cqlsafe/internal/core/wait"
)

// Stmt is one statement of a batch, with its values.
type Stmt struct {
	CQL  string
	Args []any
}

// RecordRow is one row of the tombstone table as the list statement reads it (in
// Session.Records' column order: delete_id, command_id, action, deleted_at, deleted_ts,
// row_values, writetimes, WRITETIME(command_id)).
type RecordRow[U ~[16]byte] struct {
	ID        U
	CommandID string
	Action    string
	At        time.Time
	Timestamp int64
	Values    map[string][]byte
	Times     map[string]int64
	Written   int64
}

// Session is what a Store needs of a driver's session and retry policy.
type Session[U ~[16]byte] interface {
	// Columns lists the columns of keyspace.name (found false: no such table).
	Columns(keyspace, name string) (cols []string, found bool, err error)
	// Row runs q and returns the first row's n columns as serialised bytes (nil:
	// NULL; a tuple rebuilt from its elements, value.JoinTuple), at the session's
	// consistency or, serial, at SERIAL; found false: no row.
	Row(ctx context.Context, q string, args []any, n int, serial bool) (cells [][]byte, found bool, err error)
	// Records calls row with each row of the list statement q.
	Records(ctx context.Context, q string, args []any, row func(RecordRow[U])) error
	// Keys calls row with each (table_name, row_key) of the scan statement q, paged.
	Keys(ctx context.Context, q string, row func(table string, rowKey []byte)) error
	// Batch runs stmts as one batch (logged or unlogged) through the retry policy,
	// pinned at the policy clock's next timestamp.
	Batch(ctx context.Context, logged bool, stmts []Stmt) error
	// Exec runs one statement through the retry policy.
	Exec(ctx context.Context, q string, args []any) error
	// CAS runs stmts as one unlogged conditional batch, sent once, never retried or
	// hedged (a re-sent LWT that had applied sees its own row): applied as Cassandra
	// answered.
	CAS(ctx context.Context, stmts []Stmt) (applied bool, err error)
	// MayHaveApplied reports an error after which the CAS may have applied (a timeout,
	// a lost connection, CAS write unknown, Unavailable, a context done after sending).
	MayHaveApplied(err error) bool
	// Clock is the retry policy's clock.
	Clock() *clientid.Clock
}

// Store records and undoes deletes of rows, using a tombstone table. TI is the
// driver's type description, U its UUID, P its retry policy.
type Store[TI any, U ~[16]byte, P any] struct {
	s        Session[U]
	drv      table.Driver[TI]
	keyspace string
	table    string
	cfg      Config[P]

	insertCQL, listCQL, cleanCQL, scanCQL string
}

// New returns a Store using the tombstone table keyspace.table (from the schema
// "tombstones" template). It checks the table exists (ErrNoTombstoneTable).
// c is the configuration with the options applied (Apply); s is built with c's policy.
func New[TI any, U ~[16]byte, P any](ctx context.Context, drv table.Driver[TI], s Session[U], keyspace, name string, c Config[P]) (*Store[TI, U, P], error) {
	if s == nil {
		return nil, errors.New("tombstone: nil session")
	}
	// The drivers cache a keyspace's metadata and refresh it a moment after a schema
	// change: a tombstone table created just now is looked for again, as table.Describe
	// does, for table.DescribeWait.
	deadline := time.Now().Add(table.DescribeWait)
	var cols []string
	for {
		var found bool
		var err error
		cols, found, err = s.Columns(keyspace, name)
		if found {
			break
		}
		if time.Now().After(deadline) || wait.Sleep(ctx, 100*time.Millisecond) != nil {
			if err != nil {
				return nil, fmt.Errorf("%w: %s.%s: %v", ErrNoTombstoneTable, keyspace, name, err)
			}
			return nil, fmt.Errorf("%w: %s.%s", ErrNoTombstoneTable, keyspace, name)
		}
	}
	for _, col := range []string{"table_name", "row_key", "delete_id", "command_id", "action", "deleted_at", "deleted_ts", "row_values", "writetimes"} {
		if !contains(cols, col) {
			return nil, fmt.Errorf("%w: %s.%s has no column %s (create it from the schema \"tombstones\" template)", ErrNoTombstoneTable, keyspace, name, col)
		}
	}
	st := &Store[TI, U, P]{s: s, drv: drv, keyspace: keyspace, table: name, cfg: c}
	q := cqltext.QuoteQualified(keyspace, name)
	st.insertCQL = "INSERT INTO " + q + " (table_name, row_key, delete_id, command_id, action, deleted_at, deleted_ts, row_values, writetimes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) USING TTL ?"
	st.listCQL = "SELECT delete_id, command_id, action, deleted_at, deleted_ts, row_values, writetimes, WRITETIME(command_id) FROM " + q + " WHERE table_name = ? AND row_key = ?"
	st.cleanCQL = "DELETE FROM " + q + " USING TIMESTAMP ? WHERE table_name = ? AND row_key = ? AND delete_id = ?"
	st.scanCQL = "SELECT table_name, row_key, delete_id, action FROM " + q
	return st, ctx.Err()
}

// Apply checks the names and applies opts over c: the adapters call it before they
// build their Session, which uses the policy chosen.
func Apply[P any](keyspace, name string, c Config[P], opts []Option[P]) (Config[P], error) {
	for _, n := range []string{keyspace, name} {
		if err := cqltext.ValidName(n); err != nil {
			return c, fmt.Errorf("%w: %v", ErrInvalidName, err)
		}
	}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func tableName[TI any](t *table.Table[TI]) string { return t.Keyspace + "." + t.Name }

// rowKeyOf validates key against t and returns its values and its encoding.
func rowKeyOf[TI any](t *table.Table[TI], key any) ([]any, []byte, error) {
	if t == nil {
		return nil, nil, errors.New("tombstone: nil table")
	}
	keyVals, err := t.KeyValues(key)
	if err != nil {
		return nil, nil, err
	}
	rowKey, err := t.EncodeKey(keyVals)
	if err != nil {
		return nil, nil, err
	}
	return keyVals, rowKey, nil
}

// rowState is a row as read with WRITETIMEs and TTLs.
type rowState struct {
	exists     bool
	values     map[string]any // non-null regular columns
	raw        map[string][]byte
	writeTimes map[string]int64
	ttls       map[string]int // remaining seconds, for cells with a TTL
	newest     int64
}

// readCQL is the statement readRow reads the row with. Before Cassandra 5.0 a table
// with a non-frozen collection or UDT is table.ErrUnsupported: the callers ask for it
// before reading or writing anything.
func readCQL[TI any](t *table.Table[TI]) (string, error) {
	cols := make([]string, len(t.Regular))
	for i, c := range t.Regular {
		cols[i] = c.Name
	}
	// With no regular column the statement reads the first key column: the row exists
	// or not.
	return t.SelectByKey(table.CellValue|table.CellWriteTime|table.CellTTL, cols...)
}

// readRow reads the row's regular columns with their write times and TTLs (serial: at
// SERIAL). Non-frozen collections use MAXWRITETIME and per-element TTL() (Cassandra
// 5.0). Values are kept in their serialised form: the record keeps them byte for byte —
// an empty blob stays empty, not NULL, and a vector needs no codec.
func (st *Store[TI, U, P]) readRow(ctx context.Context, t *table.Table[TI], key []any, serial bool) (rowState, error) {
	q, err := readCQL(t)
	if err != nil {
		return rowState{}, err
	}
	rs := rowState{values: map[string]any{}, raw: map[string][]byte{}, writeTimes: map[string]int64{}, ttls: map[string]int{}}
	n := 3 * len(t.Regular) // each column's value, WRITETIME and TTL
	if len(t.Regular) == 0 {
		n = 1 // the first key column
	}
	keyArgs, err := t.KeyArgs(key)
	if err != nil {
		return rowState{}, err
	}
	cells, found, err := st.s.Row(ctx, q, keyArgs, n, serial)
	if err != nil {
		return rs, fmt.Errorf("tombstone: read %s: %w", tableName(t), err)
	}
	if !found {
		return rs, nil
	}
	if len(cells) != n {
		return rs, fmt.Errorf("tombstone: read %s: %d cells, want %d", tableName(t), len(cells), n)
	}
	rs.exists = true
	for i, c := range t.Regular {
		b, wt, ttl := cells[3*i], cells[3*i+1], cells[3*i+2]
		if wt == nil {
			continue // null column
		}
		wts, err := bigint(wt)
		if err != nil {
			return rs, fmt.Errorf("tombstone: read %s: WRITETIME(%s): %w", tableName(t), c.Name, err)
		}
		v, err := st.drv.Unmarshal(c.Type, b)
		if err != nil {
			v = st.drv.RawOf(b) // no Go type for it (e.g. a vector inside a UDT): its bytes, bindable
		}
		rs.values[c.Name], rs.raw[c.Name], rs.writeTimes[c.Name] = v, b, wts
		rs.newest = max(rs.newest, wts)
		var fields []bool
		if c.Collection && c.IsUDT() {
			fields = value.UDTFields(b)
		}
		left, err := cellTTL(ttl, c.Collection, fields)
		if err != nil {
			return rs, fmt.Errorf("tombstone: read %s: TTL(%s): %w", tableName(t), c.Name, err)
		}
		if left > 0 {
			rs.ttls[c.Name] = left
		}
	}
	// Whatever this process writes to the row next is stamped above what it has just
	// seen, even when its wall clock lags the clock that wrote it (clientid.Clock.Observe).
	st.s.Clock().Observe(rs.newest)
	return rs, nil
}

// bigint decodes a bigint.
func bigint(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("%d bytes, want 8", len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

// cellTTL is a column's remaining TTL in seconds, 0 for none, from TTL() as read: an
// int, or for a non-frozen collection or UDT (collection) a list of its elements' or
// fields' (0 or null: none). The elements are restored with one, the longest, so that
// no element vanishes before it would have. For a non-frozen UDT, fields says which
// fields hold a cell (udtFields): TTL() is null for a field without one, which says
// nothing about the TTL of the others.
func cellTTL(b []byte, collection bool, fields []bool) (int, error) {
	if b == nil {
		return 0, nil
	}
	if !collection {
		if len(b) != 4 {
			return 0, fmt.Errorf("%d bytes, want 4", len(b))
		}
		return int(int32(binary.BigEndian.Uint32(b))), nil
	}
	if len(b) < 4 {
		return 0, fmt.Errorf("%d bytes, want a list", len(b))
	}
	n := int(int32(binary.BigEndian.Uint32(b)))
	rest := b[4:]
	longest := 0
	for i := range max(n, 0) {
		if len(rest) < 4 {
			return 0, errors.New("short list")
		}
		l := int(int32(binary.BigEndian.Uint32(rest)))
		rest = rest[4:]
		absent := fields != nil && (i >= len(fields) || !fields[i])
		if l < 0 {
			if absent {
				continue // a UDT field without a cell
			}
			return 0, nil // an element without TTL
		}
		if l != 4 || len(rest) < 4 {
			return 0, fmt.Errorf("element of %d bytes, want 4", l)
		}
		e := int(int32(binary.BigEndian.Uint32(rest)))
		rest = rest[4:]
		if absent {
			continue
		}
		if e <= 0 {
			return 0, nil
		}
		longest = max(longest, e)
	}
	return longest, nil
}

// Delete: see the adapters' Store.Delete.
func (st *Store[TI, U, P]) Delete(ctx context.Context, t *table.Table[TI], key any, commandID string) (Record[U], error) {
	if commandID == "" {
		return Record[U]{}, ErrEmptyCommand
	}
	keyVals, rowKey, err := rowKeyOf(t, key)
	if err != nil {
		return Record[U]{}, err
	}
	if _, err := readCQL(t); err != nil {
		return Record[U]{}, err
	}
	for _, c := range t.Regular {
		if strings.HasPrefix(c.Name, expiresKey) {
			return Record[U]{}, fmt.Errorf("%w: column %q of %s: names starting with %q are reserved by the tombstone record",
				ErrInvalidName, c.Name, tableName(t), expiresKey)
		}
	}
	fallbackTS := st.s.Clock().Next() // before the read: see the package doc
	rs, err := st.readRow(ctx, t, keyVals, false)
	if err != nil {
		return Record[U]{}, err
	}
	if !rs.exists {
		return Record[U]{}, fmt.Errorf("%w: %s", ErrNoRow, tableName(t))
	}
	if st.cfg.AfterRead != nil {
		st.cfg.AfterRead()
	}
	ts := rs.newest
	if ts == 0 {
		ts = fallbackTS
	}
	now := st.cfg.Now()
	rec := Record[U]{Table: tableName(t), ID: U(clientid.NewTimeUUID(now)), CommandID: commandID, Action: ActionDelete,
		At: now.UTC().Truncate(time.Millisecond), Timestamp: ts, Values: rs.values, WriteTimes: rs.writeTimes,
		Expires: map[string]time.Time{}, raw: rs.raw}
	// The record's frozen map carries write times and, under expiresKey, expiries.
	times := make(map[string]int64, len(rs.writeTimes)+len(rs.ttls))
	for name, wt := range rs.writeTimes {
		times[name] = wt
	}
	for name, ttl := range rs.ttls {
		exp := now.Unix() + int64(ttl)
		rec.Expires[name] = time.Unix(exp, 0).UTC()
		times[expiresKey+name] = exp
	}
	// One row deletion at T (a tombstone shadows cells with timestamps <= its own): the
	// row marker has no readable timestamp, so only a deletion at T also removes it.
	keyArgs, err := t.KeyArgs(keyVals)
	if err != nil {
		return Record[U]{}, err
	}
	// The batch timestamp applies to the tombstone record only; the delete has its own.
	stmts := []Stmt{
		{st.insertCQL, []any{rec.Table, rowKey, rec.ID, commandID, ActionDelete, rec.At, ts, rs.raw, times, int(st.cfg.TTL / time.Second)}},
		{t.DeleteRow(), append([]any{ts}, keyArgs...)},
	}
	if err := st.s.Batch(ctx, true, stmts); err != nil {
		return rec, fmt.Errorf("tombstone: delete %s: %w", rec.Table, err)
	}
	return rec, nil
}
