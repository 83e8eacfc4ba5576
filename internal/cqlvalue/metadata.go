package cqlvalue

import (
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
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
// Tables built from system_schema hold each column's kind, position and type text
// (ColumnTypeText), no TypeInfo and no user types (UserTypes reads those). The result
// is kept for a second per session and keyspace, since the verdict asks per statement.
func KeyspaceMetadata(s *gocql.Session, keyspace string) (*gocql.KeyspaceMetadata, error) {
	km, err := s.KeyspaceMetadata(keyspace)
	if err == nil || errors.Is(err, gocql.ErrKeyspaceDoesNotExist) || keyspace == "" {
		return km, err
	}
	return fallback(s, keyspace, err)
}

// UserTypes reports whether keyspace km has user-defined types: from its metadata where
// it lists some, else from system_schema.types (metadata read from system_schema by
// KeyspaceMetadata lists none).
func UserTypes(s *gocql.Session, km *gocql.KeyspaceMetadata) bool {
	if km == nil || HasUserTypes(km) {
		return km != nil
	}
	var name string
	return s.Query(`SELECT type_name FROM system_schema.types WHERE keyspace_name = ? LIMIT 1`, km.Name).
		Consistency(gocql.One).Idempotent(true).Scan(&name) == nil
}

const fallbackTTL = time.Second

type cached struct {
	km  *gocql.KeyspaceMetadata
	err error
	at  time.Time
}

// fallbacks caches each session's keyspaces read from system_schema
// (weak.Pointer[gocql.Session] → *sync.Map of keyspace → cached). The key does not keep a
// session alive; its entry is dropped when the session is collected.
var fallbacks sync.Map

func fallback(s *gocql.Session, keyspace string, driverErr error) (*gocql.KeyspaceMetadata, error) {
	key := weak.Make(s)
	m, ok := fallbacks.Load(key)
	if !ok {
		var loaded bool
		if m, loaded = fallbacks.LoadOrStore(key, new(sync.Map)); !loaded {
			runtime.AddCleanup(s, func(k weak.Pointer[gocql.Session]) { fallbacks.Delete(k) }, key)
		}
	}
	byKs := m.(*sync.Map)
	now := time.Now()
	if e, ok := byKs.Load(keyspace); ok {
		if c := e.(cached); now.Sub(c.at) < fallbackTTL {
			return c.km, c.err
		}
	}
	km, err := readSchemaTables(s, keyspace)
	if err != nil {
		err = errors.Join(driverErr, err)
	}
	byKs.Store(keyspace, cached{km: km, err: err, at: now})
	return km, err
}

// readSchemaTables builds a keyspace's tables from system_schema.columns.
func readSchemaTables(s *gocql.Session, keyspace string) (*gocql.KeyspaceMetadata, error) {
	iter := s.Query(`SELECT table_name, column_name, kind, position, type FROM system_schema.columns WHERE keyspace_name = ?`, keyspace).
		Consistency(gocql.One).Idempotent(true).Iter()
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
		if err := s.Query(`SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?`, keyspace).
			Consistency(gocql.One).Idempotent(true).Scan(&n); errors.Is(err, gocql.ErrNotFound) {
			return nil, gocql.ErrKeyspaceDoesNotExist
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
	fk, ferr := fallback(s, keyspace, err)
	if ferr != nil || fk == nil {
		if err == nil {
			err = ferr
		}
		return nil, false, err
	}
	tm, ok = fk.Tables[table]
	return tm, ok, nil
}
