package tombstone

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/table"
)

// Sentinels. Bad input returns one before anything is written.
var (
	ErrEmptyCommand     = errors.New("tombstone: empty command id")
	ErrNoRow            = errors.New("tombstone: row does not exist")
	ErrNoTombstone      = errors.New("tombstone: no delete to undo")
	ErrNotLastDelete    = errors.New("tombstone: the row's most recent delete came from another command")
	ErrRowExists        = errors.New("tombstone: the row exists now")
	ErrNoTombstoneTable = errors.New("tombstone: tombstone table missing")
	ErrInvalidName      = errors.New("tombstone: invalid keyspace or table name")
	// ErrRestoreShadowed: the restore applied, but the row is not visible — a delete
	// stamped at or after the restore's timestamp shadows it (see Undelete).
	ErrRestoreShadowed = errors.New("tombstone: restored row is shadowed by a newer delete")
	// ErrNotRestored: a restore whose reply was lost turned out not to have applied.
	ErrNotRestored = errors.New("tombstone: the restore did not apply")
	// ErrRestoreUnknown: whether the restore applied could not be settled.
	ErrRestoreUnknown = errors.New("tombstone: restore outcome unknown")
)

// RestoreError is the typed error of an Undelete whose restore was sent: Err is
// ErrRestoreShadowed, ErrNotRestored, ErrRestoreUnknown or ErrRowExists (errors.Is
// matches it), Cause what was observed (a driver error, or nil).
type RestoreError struct {
	Table  string
	Err    error
	Detail string
	Cause  error
}

func (e *RestoreError) Error() string {
	msg := e.Err.Error() + ": " + e.Table
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

// Is matches the outcome sentinel.
func (e *RestoreError) Is(target error) bool { return target == e.Err }

// Unwrap returns the driver error behind the outcome, if any.
func (e *RestoreError) Unwrap() error { return e.Cause }

// Record actions.
const (
	ActionDelete   = "delete"
	ActionUndelete = "undelete"
)

// Record is one entry of a row's history in the tombstone table.
type Record struct {
	Table     string // keyspace.table of the deleted row
	ID        gocql.UUID
	CommandID string
	Action    string // ActionDelete or ActionUndelete
	At        time.Time
	// Timestamp is the write timestamp the delete used (µs): the newest cell it read.
	Timestamp int64
	// Values are the row's columns as they were (non-null ones), decoded.
	Values map[string]any
	// WriteTimes are the WRITETIME of each column read (MAXWRITETIME for a non-frozen
	// collection).
	WriteTimes map[string]int64
	// Expires says when each recorded cell that had a TTL would have expired (to the
	// second); a cell without TTL is absent. A non-frozen collection's elements share the
	// latest expiry of any of them, or none if one of them had no TTL.
	Expires map[string]time.Time

	written int64             // WRITETIME of the record itself (what Reconcile deletes it at)
	raw     map[string][]byte // Values serialised, as read: what a restore binds
}

// expiresKey prefixes the keys that carry cells' expiries in the record's writetimes
// map (Unix seconds), beside the columns' write times: the template has no other place
// for them. A table with a column whose name starts with it is refused.
const expiresKey = "expires:"

// Store records and undoes deletes of rows, using a tombstone table.
type Store struct {
	s        *gocql.Session
	keyspace string
	table    string
	cfg      config

	insertCQL, listCQL, cleanCQL, scanCQL string
}

// Option configures a Store.
type Option func(*config) error

type config struct {
	ttl       time.Duration
	settle    time.Duration
	policy    *retry.Policy // its clock stamps deletes and records
	afterRead func()
	now       func() time.Time
}

// defaults: tombstones live 30 days; a restore with a lost reply is settled 2 s after it
// was sent; retries, and timestamps from the clock of, retry.NewPolicy().
func defaults() config {
	return config{ttl: 30 * 24 * time.Hour, settle: 2 * time.Second, policy: retry.NewPolicy(), now: time.Now}
}

// WithSettleDelay sets how long after sending a restore whose reply was lost Undelete
// waits before the SERIAL read that settles it (at least 0). A Paxos coordinator keeps
// retrying a contended round for the cluster's cas_contention_timeout (1 s by default)
// from when it received the request; a round begun before the settling read is fenced
// by it, one begun after could still apply. So: that timeout plus the network delay.
func WithSettleDelay(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("tombstone: settle delay %v: negative", d)
		}
		c.settle = d
		return nil
	}
}

// WithTTL sets how long tombstones are kept (at least 1 s).
func WithTTL(d time.Duration) Option {
	return func(c *config) error {
		if d < time.Second || d%time.Second != 0 {
			return fmt.Errorf("tombstone: TTL %v: whole seconds, at least 1", d)
		}
		c.ttl = d
		return nil
	}
}

// WithRetryPolicy retries the delete batch through p, and takes timestamps from p's
// clock. p must be valid (retry.Policy.Err).
func WithRetryPolicy(p *retry.Policy) Option {
	return func(c *config) error {
		if p == nil {
			return errors.New("tombstone: nil retry policy")
		}
		if err := p.Err(); err != nil {
			return fmt.Errorf("tombstone: %w", err)
		}
		c.policy = p
		return nil
	}
}

// WithHookAfterRead calls f between Delete's read and its write: for tests that need a
// racing write at exactly that point.
func WithHookAfterRead(f func()) Option { return func(c *config) error { c.afterRead = f; return nil } }

// New returns a Store using the tombstone table keyspace.table (from the schema
// "tombstones" template). It checks the table exists (ErrNoTombstoneTable).
func New(ctx context.Context, s *gocql.Session, keyspace, name string, opts ...Option) (*Store, error) {
	for _, n := range []string{keyspace, name} {
		if err := cqltext.ValidName(n); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidName, err)
		}
	}
	if s == nil {
		return nil, errors.New("tombstone: nil session")
	}
	c := defaults()
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	km, err := s.KeyspaceMetadata(keyspace)
	if err != nil {
		return nil, fmt.Errorf("%w: %s.%s: %v", ErrNoTombstoneTable, keyspace, name, err)
	}
	tm, ok := km.Tables[name]
	if !ok {
		return nil, fmt.Errorf("%w: %s.%s", ErrNoTombstoneTable, keyspace, name)
	}
	for _, col := range []string{"table_name", "row_key", "delete_id", "command_id", "action", "deleted_at", "deleted_ts", "row_values", "writetimes"} {
		if _, ok := tm.Columns[col]; !ok {
			return nil, fmt.Errorf("%w: %s.%s has no column %s (create it from the schema \"tombstones\" template)", ErrNoTombstoneTable, keyspace, name, col)
		}
	}
	st := &Store{s: s, keyspace: keyspace, table: name, cfg: c}
	q := cqltext.QuoteQualified(keyspace, name)
	st.insertCQL = "INSERT INTO " + q + " (table_name, row_key, delete_id, command_id, action, deleted_at, deleted_ts, row_values, writetimes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) USING TTL ?"
	st.listCQL = "SELECT delete_id, command_id, action, deleted_at, deleted_ts, row_values, writetimes, WRITETIME(command_id) FROM " + q + " WHERE table_name = ? AND row_key = ?"
	st.cleanCQL = "DELETE FROM " + q + " USING TIMESTAMP ? WHERE table_name = ? AND row_key = ? AND delete_id = ?"
	st.scanCQL = "SELECT table_name, row_key, delete_id, action FROM " + q
	return st, ctx.Err()
}

func tableName(t *table.Table) string { return t.Keyspace + "." + t.Name }

// rowKeyOf validates key against t and returns its values and its encoding.
func rowKeyOf(t *table.Table, key any) ([]any, []byte, error) {
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
func readCQL(t *table.Table) (string, error) {
	cols := make([]string, len(t.Regular))
	for i, c := range t.Regular {
		cols[i] = c.Name
	}
	// With no regular column the statement reads the first key column: the row exists
	// or not.
	return t.SelectByKey(table.CellValue|table.CellWriteTime|table.CellTTL, cols...)
}

// readRow reads the row's regular columns with their write times and TTLs at
// consistency cons (0: the session's). Non-frozen collections use MAXWRITETIME and
// per-element TTL() (Cassandra 5.0).
func (st *Store) readRow(ctx context.Context, t *table.Table, key []any, cons gocql.Consistency) (rowState, error) {
	q, err := readCQL(t)
	if err != nil {
		return rowState{}, err
	}
	rs := rowState{values: map[string]any{}, raw: map[string][]byte{}, writeTimes: map[string]int64{}, ttls: map[string]int{}}
	// Values are read in their serialised form (cqlvalue.Scan): the record keeps them
	// byte for byte — an empty blob stays empty, not NULL, and a vector needs no codec.
	dest := make([]any, 0, 3*len(t.Regular))
	vals := make([]*cqlvalue.Scan, len(t.Regular))
	wts := make([]*int64, len(t.Regular))
	ttls := make([]*int, len(t.Regular))
	elemTTLs := make([][]int, len(t.Regular))
	for i, c := range t.Regular {
		vals[i] = cqlvalue.NewScan(c.Type)
		dest = append(vals[i].Dest(dest), &wts[i])
		if c.Collection {
			dest = append(dest, &elemTTLs[i])
		} else {
			dest = append(dest, &ttls[i])
		}
	}
	if len(t.Regular) == 0 {
		dest = cqlvalue.NewScan(t.PartitionKey[0].Type).Dest(dest)
	}
	keyArgs, err := t.KeyArgs(key)
	if err != nil {
		return rowState{}, err
	}
	qry := st.s.Query(q, keyArgs...).WithContext(ctx)
	if cons != 0 {
		qry = qry.Consistency(cons)
	}
	err = qry.Scan(dest...)
	if errors.Is(err, gocql.ErrNotFound) {
		return rs, nil
	}
	if err != nil {
		return rs, fmt.Errorf("tombstone: read %s: %w", tableName(t), err)
	}
	rs.exists = true
	for i, c := range t.Regular {
		if wts[i] == nil {
			continue // null column
		}
		b := vals[i].Bytes()
		v, err := cqlvalue.Unmarshal(c.Type, b)
		if err != nil {
			v = b // no Go type for it (e.g. a vector inside a UDT): its bytes
		}
		rs.values[c.Name], rs.raw[c.Name], rs.writeTimes[c.Name] = v, b, *wts[i]
		rs.newest = max(rs.newest, *wts[i])
		if ttl := cellTTL(ttls[i], elemTTLs[i]); ttl > 0 {
			rs.ttls[c.Name] = ttl
		}
	}
	// Whatever this process writes to the row next is stamped above what it has just
	// seen, even when its wall clock lags the clock that wrote it (clientid.Clock.Observe).
	st.cfg.policy.Clock().Observe(rs.newest)
	return rs, nil
}

// cellTTL is a column's remaining TTL in seconds, 0 for none. A non-frozen
// collection's elements each have their own (0: none); they are restored with one, the
// longest, so that no element vanishes before it would have.
func cellTTL(ttl *int, elems []int) int {
	if ttl != nil {
		return *ttl
	}
	longest := 0
	for _, e := range elems {
		if e <= 0 {
			return 0
		}
		longest = max(longest, e)
	}
	return longest
}

// Delete deletes the row with primary key key (a map or struct with the key columns)
// from t, recording a tombstone stamped with commandID. It returns the record. A row
// that does not exist is ErrNoRow and records nothing.
//
// The row is deleted at T, the newest WRITETIME read (Record.Timestamp): a write that
// lands between the read and the delete survives iff its timestamp is above T. See the
// package doc for why not per column. Before Cassandra 5.0 a table with a non-frozen
// collection or UDT is a *table.UnsupportedError (table.ErrUnsupported), returned
// before anything is read or written.
func (st *Store) Delete(ctx context.Context, t *table.Table, key any, commandID string) (Record, error) {
	if commandID == "" {
		return Record{}, ErrEmptyCommand
	}
	keyVals, rowKey, err := rowKeyOf(t, key)
	if err != nil {
		return Record{}, err
	}
	if _, err := readCQL(t); err != nil {
		return Record{}, err
	}
	for _, c := range t.Regular {
		if strings.HasPrefix(c.Name, expiresKey) {
			return Record{}, fmt.Errorf("%w: column %q of %s: names starting with %q are reserved by the tombstone record",
				ErrInvalidName, c.Name, tableName(t), expiresKey)
		}
	}
	fallbackTS := st.cfg.policy.Clock().Next() // before the read: see the package doc
	rs, err := st.readRow(ctx, t, keyVals, 0)
	if err != nil {
		return Record{}, err
	}
	if !rs.exists {
		return Record{}, fmt.Errorf("%w: %s", ErrNoRow, tableName(t))
	}
	if st.cfg.afterRead != nil {
		st.cfg.afterRead()
	}
	ts := rs.newest
	if ts == 0 {
		ts = fallbackTS
	}
	now := st.cfg.now()
	rec := Record{Table: tableName(t), ID: clientid.NewTimeUUID(now), CommandID: commandID, Action: ActionDelete,
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
	b := st.s.NewBatch(gocql.LoggedBatch)
	b.Query(st.insertCQL, rec.Table, rowKey, rec.ID, commandID, ActionDelete, rec.At, ts, rs.raw, times, int(st.cfg.ttl/time.Second))
	// One row deletion at T (a tombstone shadows cells with timestamps <= its own): the
	// row marker has no readable timestamp, so only a deletion at T also removes it.
	keyArgs, err := t.KeyArgs(keyVals)
	if err != nil {
		return Record{}, err
	}
	b.Query(t.DeleteRow(), append([]any{ts}, keyArgs...)...)
	// The batch timestamp applies to the tombstone record only; the delete has its own.
	if err := st.cfg.policy.ExecBatch(ctx, st.s, b, retry.AtTimestamp(st.cfg.policy.Clock().Next())); err != nil {
		return rec, fmt.Errorf("tombstone: delete %s: %w", rec.Table, err)
	}
	return rec, nil
}
