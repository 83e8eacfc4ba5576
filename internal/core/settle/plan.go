package settle

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
	"github.com/cqlsafe/cqlsafe/internal/core/engine"
	"github.com/cqlsafe/cqlsafe/internal/core/table"
)

// WritePlan is what Write reads for one statement.
type WritePlan struct {
	Keyspace, Table string
	Timestamp       int64
	Key             []KeyValue // the primary key (partition key columns first)
	NPartition      int        // how many of Key are the partition key
	Partition       []byte     // the partition key's serialized values, to compare statements
	Regular         []string   // regular columns to read
	Static          []string   // static columns to read (by partition)
	Multi           map[string]bool
	Skipped         []string
}

// KeyValue is one primary key column's value.
type KeyValue struct {
	Column string
	Value  any
}

func (p WritePlan) partitionKey() []KeyValue { return p.Key[:min(p.NPartition, len(p.Key))] }

func (p WritePlan) anyMulti(cols []string) bool {
	for _, c := range cols {
		if p.Multi[c] {
			return true
		}
	}
	return false
}

// Lookup describes a table (see Session.Table).
type Lookup[TI any] func(keyspace, name string) (*table.Table[TI], error)

// keyTerms maps the statement's primary key columns to the terms that give them: from
// WHERE (UPDATE, DELETE) or from VALUES (INSERT). Only equality names one row.
func keyTerms[TI any](w *parsedWrite, tm *table.Table[TI]) (map[string]term, error) {
	given := map[string]term{}
	for _, r := range w.where {
		if r.op != "=" || r.column == "" {
			return nil, fmt.Errorf("WHERE restriction %q does not name one row (IN, ranges, tuples and token() are not settled)", cqltext.Clause(r.value.toks))
		}
		given[r.column] = r.value
	}
	if w.verb == "insert" {
		for _, cw := range w.columns {
			if isKey(tm, cw.column) {
				given[cw.column] = cw.value
			}
		}
	}
	return given, nil
}

// tableIn describes the statement's table: in its own keyspace, else ks.
func tableIn[TI any](w *parsedWrite, ks string, lookup Lookup[TI]) (string, *table.Table[TI], error) {
	if w.keyspace != "" {
		ks = w.keyspace
	}
	if ks == "" {
		return "", nil, errors.New("no keyspace: the statement names none and the session has none (Keyspace)")
	}
	tm, err := lookup(ks, w.table)
	var te *table.Error
	switch {
	case errors.As(err, &te) && errors.Is(err, table.ErrUnknownTable) && te.Detail != "":
		return "", nil, fmt.Errorf("table %s.%s is not in the schema metadata: keyspace %s %s", ks, w.table, ks, te.Detail)
	case errors.Is(err, table.ErrUnknownTable), err == nil && tm == nil:
		return "", nil, fmt.Errorf("table %s.%s is not in the schema metadata", ks, w.table)
	case err != nil:
		return "", nil, fmt.Errorf("schema metadata of %s.%s: %v", ks, w.table, err)
	}
	return ks, tm, nil
}

// PlanWrite maps one statement to the cells whose write times tell whether it landed.
// ks is the keyspace of statements that name none; pinned the write's timestamp. The
// plan names the statement's table and partition whenever they could be read, even
// with an error (so a DELETE can still show a batch writes one partition).
func PlanWrite[TI any](drv table.Driver[TI], ks string, st engine.Statement, lookup Lookup[TI], pinned int64) (WritePlan, error) {
	plan := WritePlan{Timestamp: pinned, Multi: map[string]bool{}}
	w, err := parseWrite(st.CQL)
	if err != nil {
		return plan, err
	}
	ks, tm, err := tableIn(w, ks, lookup)
	if err != nil {
		return plan, err
	}
	plan.Keyspace, plan.Table = ks, w.table
	if w.json {
		return plan, errors.New("INSERT JSON: the written columns are in the document")
	}
	if w.timestamp != nil {
		v, unset, err := termValue(w.timestamp, cqltype.Type{Name: "bigint"}, drv.Unset(), st.Values)
		if err != nil {
			return plan, fmt.Errorf("USING TIMESTAMP: %v", err)
		}
		if !unset && v != nil {
			n, ok := toInt64(v)
			if !ok {
				return plan, fmt.Errorf("USING TIMESTAMP bound to %T", v)
			}
			plan.Timestamp = n // the statement's own timestamp wins over the batch's or query's
		}
	}
	// The key: from WHERE (UPDATE, DELETE) or from VALUES (INSERT).
	given, err := keyTerms(w, tm)
	if err != nil {
		return plan, err
	}
	nKey := len(tm.PartitionKey)
	full := nKey + len(tm.Clustering)
	var partBytes []byte
	for i, cm := range tm.KeyColumns() {
		t, ok := given[cm.Name]
		if !ok {
			if i < nKey {
				return plan, fmt.Errorf("partition key column %s has no value in the statement", cm.Name)
			}
			full = i
			break
		}
		v, err := keyTermValue(drv, &t, cm, st.Values)
		if err != nil {
			return plan, err
		}
		plan.Key = append(plan.Key, KeyValue{cm.Name, v})
		if i < nKey {
			b, err := drv.Marshal(cm.Type, v)
			if err != nil {
				return plan, fmt.Errorf("key column %s: %v", cm.Name, err)
			}
			partBytes = binary.BigEndian.AppendUint32(partBytes, uint32(len(b)))
			partBytes = append(partBytes, b...)
		}
	}
	plan.NPartition = nKey
	plan.Partition = partBytes
	switch {
	case w.conditional:
		return plan, errors.New("lightweight transaction: its cells may carry the Paxos ballot's timestamp rather than the pinned one (use LWT)")
	case w.verb == "delete":
		return plan, errors.New("DELETE leaves tombstones, which have no readable write time")
	}
	for _, cm := range tm.Columns() {
		if cm.IsCounter() {
			return plan, fmt.Errorf("counter table (column %s): counter cells carry no client timestamp", cm.Name)
		}
	}
	for _, cw := range w.columns {
		if isKey(tm, cw.column) {
			continue
		}
		cm, ok := tm.Column(cw.column)
		if !ok {
			return plan, fmt.Errorf("column %s is not in table %s.%s", cw.column, ks, w.table)
		}
		if cw.value.bind >= len(st.Values) {
			return plan, fmt.Errorf("bind marker %d has no value (%d given)", cw.value.bind+1, len(st.Values))
		}
		why := cellSkip(cw, cm, drv.Unset(), st.Values)
		if why != "" {
			plan.Skipped = append(plan.Skipped, cw.column+": "+why)
			continue
		}
		if cm.Collection {
			plan.Multi[cw.column] = true
		}
		list := &plan.Regular
		if cm.Role == table.Static {
			list = &plan.Static
		}
		if !slices.Contains(*list, cw.column) {
			*list = append(*list, cw.column)
		}
	}
	if len(plan.Regular) > 0 && full < len(tm.PartitionKey)+len(tm.Clustering) {
		return plan, fmt.Errorf("clustering column %s has no value in the statement", tm.Clustering[full-nKey].Name)
	}
	if len(plan.Regular)+len(plan.Static) == 0 {
		return plan, errors.New("writes no cell with a readable write time (only key columns, NULLs, UNSETs, removals or empty collections)")
	}
	return plan, nil
}

// cellSkip says why a written column's write time says nothing about the statement
// ("" when it does).
func cellSkip[TI any](cw columnWrite, cm table.Column[TI], unset any, values []any) string {
	if cw.op == opRemove {
		return "element removal (tombstones)"
	}
	if len(cw.value.toks) == 1 && cw.value.toks[0].Is("null") {
		return "NULL (a tombstone)"
	}
	if cw.value.bind >= 0 {
		v := values[cw.value.bind] // planSettle checked the bound values are there
		switch {
		case v == unset:
			return "UNSET (nothing written)"
		case isNull(v):
			return "bound NULL (a tombstone)"
		case cm.Collection && (cw.op == opSet || cw.op == opAdd) && emptyCollection(v):
			return "empty collection (a tombstone, or nothing)"
		}
		return ""
	}
	if cm.Collection && (cw.op == opSet || cw.op == opAdd) && len(cw.value.toks) == 2 &&
		(cw.value.toks[0].IsPunct("[") || cw.value.toks[0].IsPunct("{")) {
		return "empty collection (a tombstone, or nothing)"
	}
	return ""
}

func isKey[TI any](tm *table.Table[TI], col string) bool {
	cm, ok := tm.Column(col)
	return ok && (cm.Role == table.PartitionKey || cm.Role == table.ClusteringKey)
}

// isNull: what gocql sends as NULL (nil, typed nil pointers, nil slices and maps).
func isNull(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map:
		return rv.IsNil()
	}
	return false
}

func emptyCollection(v any) bool {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return true
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.Array:
		return rv.Len() == 0
	}
	return false
}

func toInt64(v any) (int64, bool) {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return 0, false
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), true
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return int64(rv.Uint()), true
	}
	return 0, false
}

// keyTermValue is the value a statement gives key column cm: never null or unset, which
// Cassandra rejects in a key.
func keyTermValue[TI any](drv table.Driver[TI], t *term, cm table.Column[TI], values []any) (any, error) {
	v, unset, err := termValue(t, drv.TreeOf(cm.Type), drv.Unset(), values)
	if err != nil {
		return nil, fmt.Errorf("key column %s: %v", cm.Name, err)
	}
	if unset || isNull(v) {
		return nil, fmt.Errorf("key column %s is bound to null or unset", cm.Name)
	}
	return v, nil
}
