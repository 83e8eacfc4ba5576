package suite

import (
	"context"
	"sync"
	"testing"

	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/schema"
)

// TestSchemaTemplatesApply: every template applies cleanly to Cassandra 5.0, twice.
func TestSchemaTemplatesApply(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	for _, tm := range schema.Templates() {
		p := schema.Params{Keyspace: ks}
		if tm.Name == "keyspace" {
			p.Keyspace = ks + "_k"
			t.Cleanup(func() { s.Query(`DROP KEYSPACE IF EXISTS ` + p.Keyspace).Exec() })
		}
		for i := 0; i < 2; i++ {
			if err := schema.ApplyTemplate(ctx, s, tm.Name, p); err != nil {
				t.Fatalf("%s (pass %d): %v", tm.Name, i+1, err)
			}
		}
	}
	for _, table := range []string{"events", "events_buckets", "attributes", "tombstones", "items"} {
		if _, ok, err := cqlvalue.Table(s, ks, table); !ok {
			t.Errorf("table %s missing after Apply (%v)", table, err)
		}
	}
	if err := schema.Apply(ctx, s, `CREATE TABLE plain (k int PRIMARY KEY)`); err == nil {
		t.Fatal("Apply ran DDL that is not safe to repeat")
	}
}

// TestSchemaApplyConcurrent: several goroutines apply the same schema at once; all succeed
// and the schema agrees.
func TestSchemaApplyConcurrent(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- schema.ApplyTemplate(ctx, s, "eventlog", schema.Params{Keyspace: ks})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AwaitSchemaAgreement(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.Query(`SELECT COUNT(*) FROM system_schema.tables WHERE keyspace_name = ?`, ks).Scan(&n); err != nil || n != 2 {
		t.Fatalf("tables in keyspace: %d, %v", n, err)
	}
}
