package overwrite

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/table"
)

func meta() *gocql.TableMetadata {
	text := cqlvalue.NativeType(0, gocql.TypeVarchar, "")
	intT := cqlvalue.NativeType(0, gocql.TypeInt, "")
	cols := map[string]*gocql.ColumnMetadata{
		"id":     cqlvalue.Column("id", gocql.ColumnPartitionKey, "int", intT),
		"seq":    cqlvalue.Column("seq", gocql.ColumnClusteringKey, "int", intT),
		"Name":   cqlvalue.Column("Name", gocql.ColumnRegular, "text", text),
		"age":    cqlvalue.Column("age", gocql.ColumnRegular, "int", intT),
		"tier":   cqlvalue.Column("tier", gocql.ColumnStatic, "text", text),
		"tags":   cqlvalue.Column("tags", gocql.ColumnRegular, "set<text>", gocql.CollectionType{NativeType: cqlvalue.NativeType(0, gocql.TypeSet, ""), Elem: text}),
		"frozen": cqlvalue.Column("frozen", gocql.ColumnRegular, "frozen<list<int>>", gocql.CollectionType{NativeType: cqlvalue.NativeType(0, gocql.TypeList, ""), Elem: intT}),
	}
	return &gocql.TableMetadata{Keyspace: "ks", Name: "t", Columns: cols,
		PartitionKey: []*gocql.ColumnMetadata{cols["id"]}, ClusteringColumns: []*gocql.ColumnMetadata{cols["seq"]}}
}

func TestOverwriteCounterTableRejected(t *testing.T) {
	m := meta()
	m.Columns["hits"] = cqlvalue.Column("hits", gocql.ColumnRegular, "counter", cqlvalue.NativeType(0, gocql.TypeCounter, ""))
	tbl, err := table.FromMetadata(m)
	if err != nil {
		t.Fatal(err)
	}
	var e *Error
	if _, err := refuseCounters(tbl); !errors.Is(err, ErrCounterTable) || !errors.As(err, &e) || e.Column != "hits" {
		t.Fatalf("err = %v", err)
	}
	if _, err := refuseCounters(mustTable(t)); err != nil {
		t.Fatal(err)
	}
}

func TestOverwriteOptionsRejectBadValues(t *testing.T) {
	for _, o := range []Option{WithTimestamp(0), WithTimestamp(-1), WithTTL(0), WithRetryPolicy(nil), WithRetryPolicy(retry.NewPolicy(retry.WithMaxAttempts(0))), WithMaxBatchBytes(1)} {
		if _, err := buildOptions(nil, []Option{o}); err == nil {
			t.Error("bad option accepted")
		}
	}
	if _, err := Row(context.TODO(), nil, nil, nil); !errors.Is(err, ErrUnknownTable) {
		t.Fatalf("nil table: %v", err)
	}
	tbl := mustTable(t)
	if _, err := Row(context.TODO(), nil, tbl, map[string]any{"id": 1, "seq": 1}, WithTTL(-5)); err == nil || !strings.Contains(err.Error(), "TTL") {
		t.Fatalf("bad TTL: %v", err)
	}
}

func mustTable(t *testing.T) *Table {
	t.Helper()
	tbl, err := table.FromMetadata(meta())
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestOverwriteSentinelsAreTables: the key sentinels moved to package table; overwrite's
// names are the same values, so errors.Is matches either, and *Error is *table.Error.
func TestOverwriteSentinelsAreTables(t *testing.T) {
	tbl := mustTable(t)
	_, err := Row(context.TODO(), nil, tbl, map[string]any{"seq": 1})
	var te *table.Error
	if !errors.Is(err, ErrMissingKey) || !errors.Is(err, table.ErrMissingKey) || !errors.As(err, &te) || te.Column != "id" {
		t.Fatalf("missing key: %v", err)
	}
	_, err = Partition(context.TODO(), nil, tbl, []map[string]any{{"id": 1, "seq": 1}, {"id": 1, "seq": 2, "age": "x"}})
	if !errors.Is(err, table.ErrBadValue) || !errors.As(err, &te) || te.Row != 1 {
		t.Fatalf("bad value in row 1: %v (row %d)", err, te.Row)
	}
	_, err = Partition(context.TODO(), nil, tbl, []map[string]any{{"id": 1, "seq": 1}, {"id": 2, "seq": 2}})
	if !errors.Is(err, ErrMixedPartitions) || !errors.As(err, &te) || te.Row != 1 {
		t.Fatalf("mixed partitions: %v", err)
	}
	// int and int32 marshal alike: one partition.
	if _, err = Partition(context.TODO(), nil, tbl, []map[string]any{{"id": 1, "seq": 1}, {"id": int32(1), "seq": 2}}); err == nil || errors.Is(err, ErrMixedPartitions) {
		t.Fatalf("same partition: %v", err)
	}
}

func TestOverwriteListNotRepeatable(t *testing.T) {
	m := meta()
	intT := cqlvalue.NativeType(0, gocql.TypeInt, "")
	m.Columns["l"] = cqlvalue.Column("l", gocql.ColumnRegular, "list<int>", gocql.CollectionType{NativeType: cqlvalue.NativeType(0, gocql.TypeList, ""), Elem: intT})
	tbl, err := table.FromMetadata(m)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Row(context.TODO(), nil, tbl, map[string]any{"id": 1, "seq": 1, "l": []int{1}}, WithTimestamp(10))
	if !errors.Is(err, ErrListNotRepeatable) {
		t.Fatalf("non-empty list re-applied: %v", err)
	}
	// Empty or absent lists and frozen lists write no list elements: only the nil
	// session stops these.
	for _, row := range []map[string]any{{"id": 1, "seq": 1, "l": []int{}}, {"id": 1, "seq": 1, "frozen": []int{1}}} {
		if _, err := Row(context.TODO(), nil, tbl, row, WithTimestamp(10)); err == nil || errors.Is(err, ErrListNotRepeatable) {
			t.Fatalf("%v: %v", row, err)
		}
	}
}

func TestOverwriteDefaultPolicyPerTable(t *testing.T) {
	a, b := mustTable(t), mustTable(t)
	if first := defaultPolicy(a); defaultPolicy(a) != first {
		t.Fatal("a table's default policy changed")
	}
	if defaultPolicy(a) == defaultPolicy(b) {
		t.Fatal("two tables share a default policy")
	}
}

// TestOverwriteDefaultPolicyDropsWithTable: the cache of default policies does not keep
// a table alive (a table described again and again must not pile up).
func TestOverwriteDefaultPolicyDropsWithTable(t *testing.T) {
	count := func() int {
		n := 0
		n += policies.Len()
		return n
	}
	func() {
		for range 10 {
			defaultPolicy(mustTable(t))
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for count() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d default policies outlive their tables", count())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestOverwriteOptionsAllocateNothing: options are values, applied without an
// allocation, a later one of a kind replacing an earlier one.
func TestOverwriteOptionsAllocateNothing(t *testing.T) {
	p := retry.NewPolicy()
	var o options
	allocs := testing.AllocsPerRun(100, func() {
		o, _ = buildOptions(nil, []Option{WithTimestamp(5), WithRetryPolicy(p), WithTTL(time.Minute), WithTimestamp(8)})
	})
	if allocs != 0 {
		t.Errorf("buildOptions allocates %v times per call, want 0", allocs)
	}
	if o.TS != 8 || o.Policy != p || o.TTL != 60 || o.MaxBytes != 4<<20 || o.ConsistencySet {
		t.Errorf("options applied as %+v", o)
	}
	if o, err := buildOptions(nil, []Option{{}, WithConsistency(gocql.Any)}); err != nil || !o.ConsistencySet || o.Consistency != gocql.Any {
		t.Errorf("zero Option then WithConsistency(ANY): %+v, %v", o, err)
	}
}
