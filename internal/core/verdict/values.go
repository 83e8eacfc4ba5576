package verdict

import (
	"fmt"
	"reflect"
	"slices"
)

// ValueInspector is what a driver adapter knows about bound values that the verdict
// cannot: its driver's UNSET marker (writes nothing) and values that marshal themselves
// (a driver's Marshaler), which may marshal a list unless the driver knows they never do
// (its UUID, Duration).
type ValueInspector interface {
	IsUnset(v any) bool
	MayMarshalList(v any) bool
}

// Versioned is implemented by schemas whose answers can change (a session's metadata):
// a verdict judged against it holds while Generation(keyspace) returns the same value
// for every keyspace in Verdict.Consulted.
type Versioned interface {
	Generation(keyspace string) any
}

// ForValues judges one execution of the verdict's statement with these bound values: a
// non-empty list bound whole to a non-frozen list column (or, without schema, a
// non-empty slice bound to a column of unknown type) makes it not idempotent.
func (v Verdict) ForValues(values []any, in ValueInspector) Verdict {
	v.unbound = v.markers > 0 && len(values) == 0
	if len(v.binds) == 0 || (!v.Idempotent && len(v.shadow) == 0) {
		// Nothing to judge; or not repeatable whatever the values, unless a DELETE
		// shadows what made it so — then every marker must be judged before any reason
		// is dropped (Batch, unshadow).
		return v.unshadow(values, in)
	}
	for _, b := range v.binds {
		if b.index >= len(values) {
			// No value to judge (a binder function, or values still to come): a marker
			// that decides idempotence makes the execution not repeatable.
			v = v.WithReason(fmt.Sprintf("no value to judge for bind marker %d, which may be bound to a non-frozen list", b.index+1))
			continue
		}
		val := values[b.index]
		switch {
		case b.json:
			if val == nil || in.IsUnset(val) {
				continue // null or UNSET: no document
			}
			doc, ok := jsonText(val)
			if !ok {
				v = v.WithReason(fmt.Sprintf("JSON bound to marker %d as %T, which the verdict cannot read", b.index+1, val))
				continue
			}
			if hasNowLiteral(doc) {
				v = v.WithReason("JSON value holds the timestamp literal \"now\" (the server's clock when it runs)")
			}
			if b.nowOnly {
				continue
			}
			if cols := jsonListAssignments(doc, b.listCols, b.kind); len(cols) > 0 {
				v = v.jsonListReasons(b, doc, cols)
			}
		case b.known && nonEmptyValue(val, in):
			v = v.withListReason(b, "non-empty value bound to non-frozen list "+quoteName(b.column)+" (Cassandra keys list elements by server time: a repeat appends another copy)")
		case !b.known && listLike(val, in):
			v = v.withListReason(b, "non-empty list bound to "+quoteName(b.column)+", which may be a non-frozen list (a repeat appends another copy; give the Policy the schema: WithSchema(SessionSchema(s)))")
		}
	}
	return v.unshadow(values, in)
}

// withListReason is WithReason for a list written whole from bind marker b, which a
// DELETE of the same batch may shadow.
func (v Verdict) withListReason(b bindCheck, r string) Verdict {
	if !slices.Contains(v.Reasons, r) {
		v = v.WithReason(r) // the same column bound twice: one reason, two records
	}
	// A record for every occurrence (fp -1: never covered), as listReason keeps.
	v.shadow = append(slices.Clip(v.shadow), shadowable{fp: b.fp, col: b.column, role: b.role, reason: r})
	return v
}

// jsonListReasons gives a reason for each list column a bound JSON document assigns,
// with a record a DELETE of the same batch may cover: the statement's footprint, keyed
// by the document's values as a literal document's would be.
func (v Verdict) jsonListReasons(b bindCheck, doc string, cols []string) Verdict {
	fp := -1
	if obj, ok := jsonColumns(doc); ok && b.fp >= 0 && b.fp < len(v.fps) && b.look != nil {
		w := v.fps[b.fp]
		w.key = b.look.jsonKey(w.ks, w.table, obj)
		v.fps = slices.Clone(v.fps) // the verdict may be cached: its footprints are shared
		v.fps[b.fp] = w
		fp = b.fp
	}
	for _, col := range cols {
		r := "INSERT JSON value assigns a list to " + quoteName(col) + ", which is (or may be) a non-frozen list (a repeat appends another copy)"
		if !slices.Contains(v.Reasons, r) {
			v = v.WithReason(r)
		}
		rec := shadowable{fp: fp, col: col, reason: r}
		if fp >= 0 {
			rec.role = b.look.role(v.fps[fp].ks, v.fps[fp].table, col)
		}
		v.shadow = append(slices.Clip(v.shadow), rec)
	}
	return v
}

// ForSource is the verdict of the statement as it stands in source code, with no bound
// values (what `cqlsafe lint` and `cqlsafe vet` report): a bind marker assigned whole to
// a column the schema calls a non-frozen list makes it not repeatable — any non-empty
// list bound there appends another copy on repeat, and code that binds only empty lists
// would not assign the column at all. Markers of columns of unknown type stay conditions
// (ValueConditions), since most such columns are not lists.
//
// writesNoElement, when not nil, says which markers the source visibly binds to a value
// that writes no list element (nil, the driver's UNSET, an empty slice literal): those
// are repeatable, as ForValues would find at run time.
func (v Verdict) ForSource(writesNoElement func(marker int) bool) Verdict {
	if !v.Idempotent {
		return v
	}
	for _, b := range v.binds {
		if b.known && !b.json && (writesNoElement == nil || !writesNoElement(b.index)) {
			v = v.WithReason(fmt.Sprintf("non-frozen list %s assigned whole from bind marker %d (any non-empty list bound there appends another copy on repeat)", quoteName(b.column), b.index+1))
		}
	}
	return v
}

// WithReason returns a copy of v marked not idempotent for reason r, without sharing the
// (possibly cached) verdict's Reasons slice.
func (v Verdict) WithReason(r string) Verdict {
	v.Reasons = append(append([]string(nil), v.Reasons...), r)
	v.Idempotent = false
	return v
}

func quoteName(s string) string { return `"` + s + `"` }

// jsonText reads a bound JSON document: any string or byte slice kind (json.RawMessage,
// a named string), through pointers. A value that marshals itself may send other text.
func jsonText(v any) (string, bool) {
	if _, own := reflect.TypeOf(v).MethodByName("MarshalCQL"); own {
		return "", false
	}
	rv, ok := deref(v)
	if !ok {
		return "", false
	}
	if _, own := rv.Type().MethodByName("MarshalCQL"); own {
		return "", false
	}
	switch {
	case rv.Kind() == reflect.String:
		return rv.String(), true
	case rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8:
		return string(rv.Bytes()), true
	}
	return "", false
}

// nonEmptyValue: anything but nil, UNSET, nil pointers and empty slices/maps writes
// list elements.
func nonEmptyValue(v any, in ValueInspector) bool {
	if v == nil || in.IsUnset(v) {
		return false
	}
	rv, ok := deref(v)
	if !ok {
		return false
	}
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.Array:
		return rv.Len() > 0
	}
	return true
}

// listLike: a non-empty slice, array that is not bytes (UUIDs), or map[T]struct{}, or a
// value with its own CQL marshalling, which may marshal a list. Byte arrays ([16]byte
// ids) are left out: the drivers would marshal one into a list<tinyint>, which no
// schema seen in practice binds them to. A byte slice counts: the drivers
// marshal []byte (and net.IP) into a list<tinyint> as readily as into a blob, and the
// column's type is unknown here.
func listLike(v any, in ValueInspector) bool {
	if v == nil || in.IsUnset(v) {
		return false
	}
	if in.MayMarshalList(v) {
		return true
	}
	rv, ok := deref(v)
	if !ok {
		return false
	}
	switch rv.Kind() {
	case reflect.Slice:
		return rv.Len() > 0
	case reflect.Array:
		return rv.Len() > 0 && rv.Type().Elem().Kind() != reflect.Uint8
	case reflect.Map:
		// map[T]struct{}, Go's set idiom: the drivers marshal its keys into a list.
		return rv.Len() > 0 && rv.Type().Elem().Kind() == reflect.Struct && rv.Type().Elem().NumField() == 0
	}
	return false
}

// ValueConditions lists, one line each, the bind markers whose value decides whether an
// Idempotent verdict holds for an execution: a non-empty list bound to a non-frozen list
// column (or, without schema, to a column that may be one) makes it not repeatable. A
// linter that has no values reports them; ForValues applies them to the values.
func (v Verdict) ValueConditions() []string {
	var out []string
	for _, b := range v.binds {
		switch {
		case b.nowOnly, b.json && b.listCols != nil && len(b.listCols) == 0:
			// A table without lists: only a "now" in the document, too rare to list.
		case b.json:
			out = append(out, fmt.Sprintf("bind marker %d: an INSERT JSON document with a non-empty array for a non-frozen list column is not repeatable", b.index+1))
		case b.known:
			out = append(out, fmt.Sprintf("bind marker %d: a non-empty list bound to non-frozen list %q is not repeatable (each repeat appends another copy)", b.index+1, b.column))
		default:
			out = append(out, fmt.Sprintf("bind marker %d: a non-empty list bound to %q is not repeatable if it is a non-frozen list (schema metadata can tell)", b.index+1, b.column))
		}
	}
	return out
}

// deref follows pointers and interfaces to the value; ok is false at a nil one.
func deref(v any) (rv reflect.Value, ok bool) {
	rv = reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return rv, false
		}
		rv = rv.Elem()
	}
	return rv, true
}

// Unbound reports a text with bind markers judged with no values (ForValues given
// none): its values come from a binder the driver calls on every send (Session.Bind,
// Batch.Bind), so no verdict, pin or record can know the values actually sent. For a
// batch, some entry is.
func (v Verdict) Unbound() bool { return v.unbound }
