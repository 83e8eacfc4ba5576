package overwrite

import (
	"context"
	"errors"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/gocqlv2/table"
)

func listTable(t *testing.T) *Table {
	t.Helper()
	id := &gocql.ColumnMetadata{Name: "id", Kind: gocql.ColumnPartitionKey, Validator: "int"}
	l := &gocql.ColumnMetadata{Name: "l", Kind: gocql.ColumnRegular, Validator: "list<int>"}
	tbl, err := table.FromMetadata(&gocql.TableMetadata{Keyspace: "ks", Name: "t",
		Columns: map[string]*gocql.ColumnMetadata{"id": id, "l": l}, PartitionKey: []*gocql.ColumnMetadata{id}})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestOverwriteV2RefusesBeforeSending: bad options and bad rows are errors before a
// session is even looked at (a nil one would be the next error); SERIAL is no write
// consistency on v2, where it is a Consistency value.
func TestOverwriteV2RefusesBeforeSending(t *testing.T) {
	ctx := context.Background()
	tbl := listTable(t)
	row := map[string]any{"id": 1, "l": []int{1}}
	for name, opt := range map[string]Option{
		"SERIAL as consistency": WithConsistency(gocql.Serial),
		"QUORUM as serial":      WithSerialConsistency(gocql.Quorum),
		"TTL under 1s":          WithTTL(time.Millisecond),
		"zero timestamp":        WithTimestamp(0),
		"small batches":         WithMaxBatchBytes(10),
		"nil policy":            WithRetryPolicy(nil),
		"invalid policy":        WithRetryPolicy(retry.NewPolicy(retry.WithMaxAttempts(0))),
	} {
		if _, err := Row(ctx, nil, tbl, row, opt); err == nil || errors.Is(err, errNilSession) {
			t.Errorf("%s: %v, want the option's error", name, err)
		}
	}
	if _, err := Row(ctx, nil, tbl, row, WithTimestamp(5)); !errors.Is(err, ErrListNotRepeatable) {
		t.Errorf("pinned list: %v", err)
	}
	if _, err := Partition(ctx, nil, tbl, []map[string]any{{"id": 1}, {"id": 2}}); !errors.Is(err, ErrMixedPartitions) {
		t.Errorf("two partitions: %v", err)
	}
	if _, err := Partition(ctx, nil, tbl, []map[string]any{}); !errors.Is(err, ErrNoRows) {
		t.Errorf("no rows: %v", err)
	}
	if _, err := Row(ctx, nil, nil, row); !errors.Is(err, ErrUnknownTable) {
		t.Errorf("nil table: %v", err)
	}
	if _, err := Row(ctx, nil, tbl, map[string]any{"l": []int{1}}); !errors.Is(err, ErrMissingKey) {
		t.Errorf("no key: %v", err)
	}
	if _, err := Row(ctx, nil, tbl, row, WithConsistency(gocql.Any)); !errors.Is(err, errNilSession) {
		t.Errorf("valid input, nil session: %v", err)
	}
}
