package settle

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/retry"
)

// settlePlan is what Settle reads for one statement.
type settlePlan struct {
	keyspace, table string
	timestamp       int64
	key             []keyValue // the primary key (partition key columns first)
	nPartition      int        // how many of key are the partition key
	partition       []byte     // the partition key's serialized values, to compare statements
	regular         []string   // regular columns to read
	static          []string   // static columns to read (by partition)
	multi           map[string]bool
	skipped         []string
}

type keyValue struct {
	column string
	value  any
}

func (p settlePlan) partitionKey() []keyValue { return p.key[:min(p.nPartition, len(p.key))] }

func (p settlePlan) anyMulti(cols []string) bool {
	for _, c := range cols {
		if p.multi[c] {
			return true
		}
	}
	return false
}

type tableLookup func(keyspace, table string) (*gocql.TableMetadata, error)

// keyTerms maps the statement's primary key columns to the terms that give them: from
// WHERE (UPDATE, DELETE) or from VALUES (INSERT). Only equality names one row.
func (w *parsedWrite) keyTerms(tm *gocql.TableMetadata) (map[string]term, error) {
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

// tableIn finds the metadata of the statement's table: in its own keyspace, else ks.
func (w *parsedWrite) tableIn(ks string, lookup tableLookup) (string, *gocql.TableMetadata, error) {
	if w.keyspace != "" {
		ks = w.keyspace
	}
	if ks == "" {
		return "", nil, errors.New("no keyspace: the statement names none and the session has none (Keyspace)")
	}
	tm, err := lookup(ks, w.table)
	if err != nil {
		return "", nil, fmt.Errorf("schema metadata of keyspace %s: %v", ks, err)
	}
	if tm == nil {
		return "", nil, fmt.Errorf("table %s.%s is not in the schema metadata", ks, w.table)
	}
	return ks, tm, nil
}

// planSettle maps one statement to the cells whose write times tell whether it landed.
// ks is the keyspace of statements that name none; pinned the write's timestamp. The
// plan names the statement's table and partition whenever they could be read, even
// with an error (so a DELETE can still show a batch writes one partition).
func planSettle(ks string, st retry.Statement, lookup tableLookup, pinned int64) (settlePlan, error) {
	plan := settlePlan{timestamp: pinned, multi: map[string]bool{}}
	w, err := parseWrite(st.CQL)
	if err != nil {
		return plan, err
	}
	ks, tm, err := w.tableIn(ks, lookup)
	if err != nil {
		return plan, err
	}
	plan.keyspace, plan.table = ks, w.table
	if w.json {
		return plan, errors.New("INSERT JSON: the written columns are in the document")
	}
	if w.timestamp != nil {
		v, unset, err := termValue(w.timestamp, gocql.NewNativeType(4, gocql.TypeBigInt, ""), st.Values)
		if err != nil {
			return plan, fmt.Errorf("USING TIMESTAMP: %v", err)
		}
		if !unset && v != nil {
			n, ok := toInt64(v)
			if !ok {
				return plan, fmt.Errorf("USING TIMESTAMP bound to %T", v)
			}
			plan.timestamp = n // the statement's own timestamp wins over the batch's or query's
		}
	}
	// The key: from WHERE (UPDATE, DELETE) or from VALUES (INSERT).
	given, err := w.keyTerms(tm)
	if err != nil {
		return plan, err
	}
	nKey := len(tm.PartitionKey)
	full := nKey + len(tm.ClusteringColumns)
	var partBytes []byte
	for i, cm := range append(slices.Clone(tm.PartitionKey), tm.ClusteringColumns...) {
		t, ok := given[cm.Name]
		if !ok {
			if i < nKey {
				return plan, fmt.Errorf("partition key column %s has no value in the statement", cm.Name)
			}
			full = i
			break
		}
		v, err := keyTermValue(&t, cm, st.Values)
		if err != nil {
			return plan, err
		}
		plan.key = append(plan.key, keyValue{cm.Name, v})
		if i < nKey {
			b, err := gocql.Marshal(protoType(cm.Type), v)
			if err != nil {
				return plan, fmt.Errorf("key column %s: %v", cm.Name, err)
			}
			partBytes = binary.BigEndian.AppendUint32(partBytes, uint32(len(b)))
			partBytes = append(partBytes, b...)
		}
	}
	plan.nPartition = nKey
	plan.partition = partBytes
	switch {
	case w.conditional:
		return plan, errors.New("lightweight transaction: its cells may carry the Paxos ballot's timestamp rather than the pinned one (use LWT)")
	case w.verb == "delete":
		return plan, errors.New("DELETE leaves tombstones, which have no readable write time")
	}
	for _, cm := range tm.Columns {
		if cm.Type != nil && cm.Type.Type() == gocql.TypeCounter {
			return plan, fmt.Errorf("counter table (column %s): counter cells carry no client timestamp", cm.Name)
		}
	}
	for _, cw := range w.columns {
		if isKey(tm, cw.column) {
			continue
		}
		cm := tm.Columns[cw.column]
		if cm == nil {
			return plan, fmt.Errorf("column %s is not in table %s.%s", cw.column, ks, w.table)
		}
		if cw.value.bind >= len(st.Values) {
			return plan, fmt.Errorf("bind marker %d has no value (%d given)", cw.value.bind+1, len(st.Values))
		}
		why := cellSkip(cw, cm, st.Values)
		if why != "" {
			plan.skipped = append(plan.skipped, cw.column+": "+why)
			continue
		}
		if isMultiCell(cm) {
			plan.multi[cw.column] = true
		}
		list := &plan.regular
		if cm.Kind == gocql.ColumnStatic {
			list = &plan.static
		}
		if !slices.Contains(*list, cw.column) {
			*list = append(*list, cw.column)
		}
	}
	if len(plan.regular) > 0 && full < len(tm.PartitionKey)+len(tm.ClusteringColumns) {
		return plan, fmt.Errorf("clustering column %s has no value in the statement", tm.ClusteringColumns[full-nKey].Name)
	}
	if len(plan.regular)+len(plan.static) == 0 {
		return plan, errors.New("writes no cell with a readable write time (only key columns, NULLs, UNSETs, removals or empty collections)")
	}
	return plan, nil
}

// cellSkip says why a written column's write time says nothing about the statement
// ("" when it does).
func cellSkip(cw columnWrite, cm *gocql.ColumnMetadata, values []any) string {
	if cw.op == opRemove {
		return "element removal (tombstones)"
	}
	if len(cw.value.toks) == 1 && cw.value.toks[0].Is("null") {
		return "NULL (a tombstone)"
	}
	if cw.value.bind >= 0 {
		v := values[cw.value.bind] // planSettle checked the bound values are there
		switch {
		case v == gocql.UnsetValue:
			return "UNSET (nothing written)"
		case isNull(v):
			return "bound NULL (a tombstone)"
		case isMultiCell(cm) && (cw.op == opSet || cw.op == opAdd) && emptyCollection(v):
			return "empty collection (a tombstone, or nothing)"
		}
		return ""
	}
	if isMultiCell(cm) && (cw.op == opSet || cw.op == opAdd) && len(cw.value.toks) == 2 &&
		(cw.value.toks[0].IsPunct("[") || cw.value.toks[0].IsPunct("{")) {
		return "empty collection (a tombstone, or nothing)"
	}
	return ""
}

func isKey(tm *gocql.TableMetadata, col string) bool {
	cm := tm.Columns[col]
	return cm != nil && (cm.Kind == gocql.ColumnPartitionKey || cm.Kind == gocql.ColumnClusteringKey)
}

// isMultiCell: a non-frozen collection or UDT is one cell per element.
func isMultiCell(cm *gocql.ColumnMetadata) bool {
	if cm == nil || cm.Type == nil || strings.HasPrefix(strings.ToLower(cm.Validator), "frozen<") {
		return false
	}
	switch cm.Type.Type() {
	case gocql.TypeList, gocql.TypeSet, gocql.TypeMap, gocql.TypeUDT:
		return true
	}
	return false
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

// protoType gives a type from schema metadata (whose protocol version gocql leaves 0,
// which would serialize collections in the v2 format) protocol v4.
func protoType(t gocql.TypeInfo) gocql.TypeInfo {
	switch x := t.(type) {
	case gocql.NativeType:
		return gocql.NewNativeType(4, x.Type(), x.Custom())
	case gocql.CollectionType:
		x.NativeType = gocql.NewNativeType(4, x.Type(), "")
		if x.Key != nil {
			x.Key = protoType(x.Key)
		}
		if x.Elem != nil {
			x.Elem = protoType(x.Elem)
		}
		return x
	}
	return t
}

// keyTermValue is the value a statement gives key column cm: never null or unset, which
// Cassandra rejects in a key.
func keyTermValue(t *term, cm *gocql.ColumnMetadata, values []any) (any, error) {
	v, unset, err := termValue(t, cm.Type, values)
	if err != nil {
		return nil, fmt.Errorf("key column %s: %v", cm.Name, err)
	}
	if unset || isNull(v) {
		return nil, fmt.Errorf("key column %s is bound to null or unset", cm.Name)
	}
	return v, nil
}
