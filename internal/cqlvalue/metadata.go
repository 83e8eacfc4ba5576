package cqlvalue

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/gocql/gocql"
)

// KeyspaceMetadata is s.KeyspaceMetadata(keyspace), or — where the driver cannot read
// it from this cluster — the keyspace's tables read from system_schema.columns.
// ScyllaDB's fork v1.15 reads system_schema.scylla_tables, which Apache Cassandra does
// not have, and fails for every keyspace; its later versions and gocql v1.7 read
// Cassandra's schema. A keyspace that does not exist is gocql.ErrKeyspaceDoesNotExist
// either way.
//
// Once the driver failed so for a session, its metadata is not asked again (each try is
// a query on the control connection, and the verdict asks per statement). Tables built
// from system_schema hold each column's kind, position and type text (ColumnTypeText),
// no TypeInfo and no user types (UserTypes reads those); they are kept a second per
// session and keyspace, and kept longer when a read to refresh them fails.
func KeyspaceMetadata(s *gocql.Session, keyspace string) (*gocql.KeyspaceMetadata, error) {
	if s == nil {
		return nil, errors.New("cqlvalue: nil session")
	}
	m := metaOf(s)
	if !m.driverFails.Load() {
		km, err := s.KeyspaceMetadata(keyspace)
		if err == nil || errors.Is(err, gocql.ErrKeyspaceDoesNotExist) || keyspace == "" {
			return km, err
		}
		// The fork's query of Scylla's own table fails the same way every time; any other
		// error (a timeout, no connection) is asked again next time.
		if strings.Contains(err.Error(), "scylla_tables") {
			m.driverFails.Store(true)
		}
	}
	return m.fallback(s, keyspace)
}

// UserTypes reports whether keyspace km has user-defined types: from its metadata where
// it lists some, else from system_schema.types (metadata read from system_schema by
// KeyspaceMetadata lists none).
func UserTypes(ctx context.Context, s *gocql.Session, km *gocql.KeyspaceMetadata) (bool, error) {
	if km == nil || HasUserTypes(km) {
		return km != nil, nil
	}
	var name string
	err := s.Query(`SELECT type_name FROM system_schema.types WHERE keyspace_name = ? LIMIT 1`, km.Name).
		WithContext(ctx).Consistency(gocql.One).Idempotent(true).Scan(&name)
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

const (
	fallbackTTL     = time.Second
	fallbackTimeout = 2 * time.Second
)

type cached struct {
	km  *gocql.KeyspaceMetadata
	err error
	at  time.Time
}

// sessionMeta is what KeyspaceMetadata keeps per session: whether the driver's
// metadata failed, and the keyspaces read from system_schema (keyspace → cached).
type sessionMeta struct {
	driverFails atomic.Bool
	byKs        sync.Map
	refresh     sync.Mutex // one system_schema read at a time; the others take the stale copy
}

// metas holds each session's sessionMeta (weak.Pointer[gocql.Session] → *sessionMeta).
// The key does not keep a session alive; its entry is dropped when the session is
// collected.
var metas sync.Map

func metaOf(s *gocql.Session) *sessionMeta {
	key := weak.Make(s)
	m, ok := metas.Load(key)
	if !ok {
		var loaded bool
		if m, loaded = metas.LoadOrStore(key, new(sessionMeta)); !loaded {
			runtime.AddCleanup(s, func(k weak.Pointer[gocql.Session]) { metas.Delete(k) }, key)
		}
	}
	return m.(*sessionMeta)
}

// fallback is keyspace's metadata read from system_schema, kept fallbackTTL; a read that
// fails (the cluster unreachable) keeps what was read before.
func (m *sessionMeta) fallback(s *gocql.Session, keyspace string) (*gocql.KeyspaceMetadata, error) {
	now := time.Now()
	var old *cached
	if e, ok := m.byKs.Load(keyspace); ok {
		c := e.(cached)
		if now.Sub(c.at) < fallbackTTL {
			return c.km, c.err
		}
		old = &c
	}
	if old != nil && old.km != nil {
		if !m.refresh.TryLock() {
			return old.km, old.err // another statement is reading it now
		}
	} else {
		m.refresh.Lock()
	}
	defer m.refresh.Unlock()
	if e, ok := m.byKs.Load(keyspace); ok { // read by the one that held the lock
		if c := e.(cached); time.Since(c.at) < fallbackTTL {
			return c.km, c.err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), fallbackTimeout)
	defer cancel()
	km, err := readSchemaTables(ctx, s, keyspace)
	if err != nil && !errors.Is(err, gocql.ErrKeyspaceDoesNotExist) && old != nil && old.km != nil {
		km, err = old.km, nil // stale beats none while the cluster does not answer
	}
	m.byKs.Store(keyspace, cached{km: km, err: err, at: now})
	return km, err
}

// readSchemaTables builds a keyspace's tables from system_schema.columns.
func readSchemaTables(ctx context.Context, s *gocql.Session, keyspace string) (*gocql.KeyspaceMetadata, error) {
	iter := s.Query(`SELECT table_name, column_name, kind, position, type FROM system_schema.columns WHERE keyspace_name = ?`, keyspace).
		WithContext(ctx).Consistency(gocql.One).Idempotent(true).Iter()
	type col struct {
		cm  *gocql.ColumnMetadata
		pos int
	}
	byTable := map[string][]col{}
	var table, name, kind, typ string
	var pos int
	for iter.Scan(&table, &name, &kind, &pos, &typ) {
		k := gocql.ColumnRegular
		switch strings.ToLower(kind) {
		case "partition_key":
			k = gocql.ColumnPartitionKey
		case "clustering":
			k = gocql.ColumnClusteringKey
		case "static":
			k = gocql.ColumnStatic
		}
		cm := Column(name, k, typ, nil)
		cm.Keyspace, cm.Table = keyspace, table
		byTable[table] = append(byTable[table], col{cm, pos})
	}
	if err := iter.Close(); err != nil {
		return nil, err
	}
	if len(byTable) == 0 {
		var n string
		switch err := s.Query(`SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?`, keyspace).
			WithContext(ctx).Consistency(gocql.One).Idempotent(true).Scan(&n); {
		case errors.Is(err, gocql.ErrNotFound):
			return nil, gocql.ErrKeyspaceDoesNotExist
		case err != nil:
			return nil, err
		}
	}
	km := &gocql.KeyspaceMetadata{Name: keyspace, Tables: map[string]*gocql.TableMetadata{}}
	for t, cols := range byTable {
		slices.SortFunc(cols, func(a, b col) int { return a.pos - b.pos })
		tm := &gocql.TableMetadata{Keyspace: keyspace, Name: t, Columns: map[string]*gocql.ColumnMetadata{}}
		for _, c := range cols {
			tm.Columns[c.cm.Name] = c.cm
			switch c.cm.Kind {
			case gocql.ColumnPartitionKey:
				tm.PartitionKey = append(tm.PartitionKey, c.cm)
			case gocql.ColumnClusteringKey:
				tm.ClusteringColumns = append(tm.ClusteringColumns, c.cm)
			}
		}
		km.Tables[t] = tm
	}
	return km, nil
}

// Table is keyspace.table's metadata: the driver's, or — where the driver's metadata
// does not hold the table (the ScyllaDB fork refreshes it lazily after a schema change,
// and may not hold a table created a moment ago) or cannot be read — the table read from
// system_schema (kept a second). ok false when neither has it.
func Table(s *gocql.Session, keyspace, table string) (tm *gocql.TableMetadata, ok bool, err error) {
	km, err := KeyspaceMetadata(s, keyspace)
	if err == nil && km != nil && km.Tables[table] != nil {
		return km.Tables[table], true, nil
	}
	if keyspace == "" || table == "" {
		return nil, false, err
	}
	fk, ferr := metaOf(s).fallback(s, keyspace)
	if ferr != nil || fk == nil {
		if err == nil {
			err = ferr
		}
		return nil, false, err
	}
	tm, ok = fk.Tables[table]
	return tm, ok, nil
}
