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
	"github.com/cqlsafe/cqlsafe/retry"
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
)

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
	// WriteTimes are the WRITETIME of each column read.
	WriteTimes map[string]int64
}

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
	clock     *clientid.Clock
	policy    *retry.Policy
	afterRead func()
	now       func() time.Time
}

// defaults: tombstones live 30 days; timestamps from clientid.ProcessClock(); retries
// through retry.NewPolicy().
func defaults() config {
	return config{ttl: 30 * 24 * time.Hour, clock: clientid.ProcessClock(), policy: retry.NewPolicy(), now: time.Now}
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

// WithClock sets the clock delete timestamps fall back to.
func WithClock(clock *clientid.Clock) Option {
	return func(c *config) error {
		if clock == nil {
			return errors.New("tombstone: nil clock")
		}
		c.clock = clock
		return nil
	}
}

// WithRetryPolicy retries the delete batch through p.
func WithRetryPolicy(p *retry.Policy) Option {
	return func(c *config) error {
		if p == nil {
			return errors.New("tombstone: nil retry policy")
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
func New(ctx context.Context, s *gocql.Session, keyspace, table string, opts ...Option) (*Store, error) {
	for _, n := range []string{keyspace, table} {
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
		return nil, fmt.Errorf("%w: %s.%s: %v", ErrNoTombstoneTable, keyspace, table, err)
	}
	tm, ok := km.Tables[table]
	if !ok {
		return nil, fmt.Errorf("%w: %s.%s", ErrNoTombstoneTable, keyspace, table)
	}
	for _, col := range []string{"table_name", "row_key", "delete_id", "command_id", "action", "deleted_at", "deleted_ts", "row_values", "writetimes"} {
		if _, ok := tm.Columns[col]; !ok {
			return nil, fmt.Errorf("%w: %s.%s has no column %s (create it from the schema \"tombstones\" template)", ErrNoTombstoneTable, keyspace, table, col)
		}
	}
	st := &Store{s: s, keyspace: keyspace, table: table, cfg: c}
	q := cqltext.QuoteQualified(keyspace, table)
	st.insertCQL = "INSERT INTO " + q + " (table_name, row_key, delete_id, command_id, action, deleted_at, deleted_ts, row_values, writetimes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) USING TTL ?"
	st.listCQL = "SELECT delete_id, command_id, action, deleted_at, deleted_ts, row_values, writetimes FROM " + q + " WHERE table_name = ? AND row_key = ?"
	st.cleanCQL = "DELETE FROM " + q + " WHERE table_name = ? AND row_key = ?"
	st.scanCQL = "SELECT table_name, row_key, delete_id, action FROM " + q
	return st, ctx.Err()
}

func tableName(t *overwrite.Table) string { return t.Keyspace + "." + t.Name }

// rowKeyOf validates key against t and returns its values and its encoding.
func rowKeyOf(t *overwrite.Table, key any) ([]any, []byte, error) {
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

// keyWhere is `"k1" = ? AND "k2" = ?` over t's primary key.
func keyWhere(t *overwrite.Table) string {
	cols := t.KeyColumns()
	where := make([]string, len(cols))
	for i, c := range cols {
		where[i] = cqltext.Quote(c.Name) + " = ?"
	}
	return strings.Join(where, " AND ")
}

// rowState is a row as read with WRITETIMEs.
type rowState struct {
	exists     bool
	values     map[string]any // non-null regular columns
	raw        map[string][]byte
	writeTimes map[string]int64
	newest     int64
}

// readRow reads the row's regular columns with their write times. Non-frozen
// collections use MAXWRITETIME (Cassandra 5.0).
func (st *Store) readRow(ctx context.Context, t *overwrite.Table, key []any) (rowState, error) {
	var sel []string
	for _, c := range t.Regular {
		fn := "WRITETIME"
		if c.Collection {
			fn = "MAXWRITETIME"
		}
		sel = append(sel, cqltext.Quote(c.Name), fn+"("+cqltext.Quote(c.Name)+")")
	}
	keyCols := t.KeyColumns()
	if len(sel) == 0 {
		sel = append(sel, cqltext.Quote(keyCols[0].Name))
	}
	q := fmt.Sprintf("SELECT %s FROM %s WHERE %s", strings.Join(sel, ", "),
		cqltext.QuoteQualified(t.Keyspace, t.Name), keyWhere(t))
	rs := rowState{values: map[string]any{}, raw: map[string][]byte{}, writeTimes: map[string]int64{}}
	dest := make([]any, 0, 2*len(t.Regular))
	vals := make([]any, len(t.Regular))
	wts := make([]*int64, len(t.Regular))
	for i, c := range t.Regular {
		vals[i] = c.Type.New()
		dest = append(dest, vals[i], &wts[i])
	}
	if len(t.Regular) == 0 {
		var k any = keyCols[0].Type.New()
		dest = append(dest, k)
	}
	err := st.s.Query(q, key...).WithContext(ctx).Scan(dest...)
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
		v := cqlvalue.Deref(vals[i])
		b, err := gocql.Marshal(c.Type, v)
		if err != nil {
			return rs, fmt.Errorf("tombstone: encode %s: %w", c.Name, err)
		}
		rs.values[c.Name], rs.raw[c.Name], rs.writeTimes[c.Name] = v, b, *wts[i]
		rs.newest = max(rs.newest, *wts[i])
	}
	return rs, nil
}

// Delete deletes the row with primary key key (a map or struct with the key columns)
// from t, recording a tombstone stamped with commandID. It returns the record. A row
// that does not exist is ErrNoRow and records nothing.
func (st *Store) Delete(ctx context.Context, t *overwrite.Table, key any, commandID string) (Record, error) {
	if commandID == "" {
		return Record{}, ErrEmptyCommand
	}
	keyVals, rowKey, err := rowKeyOf(t, key)
	if err != nil {
		return Record{}, err
	}
	fallbackTS := st.cfg.clock.Next() // before the read: see the package doc
	rs, err := st.readRow(ctx, t, keyVals)
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
		At: now.UTC().Truncate(time.Millisecond), Timestamp: ts, Values: rs.values, WriteTimes: rs.writeTimes}
	b := st.s.NewBatch(gocql.LoggedBatch)
	b.Query(st.insertCQL, rec.Table, rowKey, rec.ID, commandID, ActionDelete, rec.At, ts, rs.raw, rs.writeTimes, int(st.cfg.ttl/time.Second))
	b.Query(fmt.Sprintf("DELETE FROM %s USING TIMESTAMP ? WHERE %s", cqltext.QuoteQualified(t.Keyspace, t.Name), keyWhere(t)),
		append([]any{ts}, keyVals...)...)
	// The batch timestamp applies to the tombstone record only; the delete has its own.
	if err := st.cfg.policy.ExecBatchAt(ctx, st.s, b, st.cfg.clock.Next()); err != nil {
		return rec, fmt.Errorf("tombstone: delete %s: %w", rec.Table, err)
	}
	return rec, nil
}
