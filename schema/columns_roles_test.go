package schema

import (
	"slices"
	"testing"

	"github.com/cqlsafe/cqlsafe/retry"
)

// TestColumnsRolesAndClustering: the primary key's roles and clustering columns, as the
// verdict asks them (RoleSchema, ClusteringSchema); a static column added by ALTER TABLE
// is static, and a table seen only through ALTER has no known clustering columns.
func TestColumnsRolesAndClustering(t *testing.T) {
	cols, err := ParseColumns(`
		CREATE TABLE ks.r (k int, slot int, c0 uuid, c1 bigint, v int, s int static, PRIMARY KEY ((k, slot), c0, c1));
		CREATE TABLE ks.p (id int PRIMARY KEY, v text);
		CREATE TABLE ks.q (a int, b int, PRIMARY KEY (a, b));
		ALTER TABLE ks.q ADD l list<int> static;
		ALTER TABLE ks.only ADD x int;
		ALTER TABLE ks.only ADD y int static;`)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		table, col string
		want       retry.ColumnRole
	}{
		{"r", "k", retry.RolePartitionKey}, {"r", "slot", retry.RolePartitionKey}, {"r", "c0", retry.RoleClustering},
		{"r", "c1", retry.RoleClustering}, {"r", "v", retry.RoleRegular}, {"r", "s", retry.RoleStatic},
		{"p", "id", retry.RolePartitionKey}, {"q", "a", retry.RolePartitionKey}, {"q", "b", retry.RoleClustering},
		{"q", "l", retry.RoleStatic}, {"only", "x", retry.RoleRegular}, {"only", "y", retry.RoleStatic},
		{"r", "nope", retry.RoleUnknown}, {"nope", "k", retry.RoleUnknown},
	} {
		if got := cols.ColumnRole("ks", c.table, c.col); got != c.want {
			t.Errorf("%s.%s: role %v, want %v", c.table, c.col, got, c.want)
		}
	}
	for table, want := range map[string][]string{"r": {"c0", "c1"}, "p": {}, "q": {"b"}} {
		if got, ok := cols.ClusteringColumns("ks", table); !ok || !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Errorf("%s: clustering %v (%v), want %v", table, got, ok, want)
		}
	}
	if _, ok := cols.ClusteringColumns("ks", "only"); ok {
		t.Error("a table seen only through ALTER: clustering columns claimed known")
	}
}
