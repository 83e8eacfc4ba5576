package table

import (
	"slices"
	"strings"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
)

// ColumnDef is one column as the driver's schema metadata has it.
type ColumnDef[TI any] struct {
	Name string
	Role ColumnRole
	// Validator is the type text system_schema.columns holds ("frozen<list<int>>").
	Validator string
	// Type is the driver's own description, kept when Validator does not parse (the
	// keyspace's user types unknown, a custom type).
	Type TI
}

// Build makes a Table of the columns (partition key and clustering columns in key
// order; the others in any order), parsing each type text with the keyspace's user
// types (nil: none known). release is the cluster's oldest release_version (empty:
// unknown, the builders then assume Cassandra 5.0 or later). A table without a
// partition key is ErrUnknownTable.
func Build[TI any](drv Driver[TI], keyspace, name string, cols []ColumnDef[TI], udts map[string]cqltype.UserType, release string) (*Table[TI], error) {
	t := &Table[TI]{Keyspace: keyspace, Name: name, byName: map[string]int{}, memo: &memo{}, drv: drv, unset: drv.Unset()}
	if release != "" {
		t.version = parseVersion(release)
	}
	parser := &cqltype.Parser{Keyspace: keyspace, UDTs: udts}
	var regular, static []Column[TI]
	for _, cd := range cols {
		c := Column[TI]{Name: cd.Name, Role: cd.Role, Type: cd.Type, CQLType: cd.Validator}
		if tree, err := parser.Parse(cd.Validator); err == nil {
			c.tree, c.Type = tree, drv.TypeOf(tree)
			switch tree.Kind {
			// A non-frozen UDT is multi-cell too (a cell per field): WRITETIME and TTL
			// of it are lists, as of a collection.
			case cqltype.List, cqltype.Set, cqltype.Map, cqltype.UDT:
				c.Collection = !tree.Frozen
			}
		} else {
			// Unparsed (a user type not given): the driver's own description still
			// tells a collection or a tuple, and its elements where it knows them.
			c.tree = drv.TreeOf(cd.Type)
			switch c.tree.Kind {
			case cqltype.List, cqltype.Set, cqltype.Map:
				c.Collection = !strings.HasPrefix(strings.ToLower(strings.TrimSpace(cd.Validator)), "frozen<")
			}
		}
		c.marker = marker(c.tree)
		switch cd.Role {
		case PartitionKey:
			t.PartitionKey = append(t.PartitionKey, c)
		case ClusteringKey:
			t.Clustering = append(t.Clustering, c)
		case Static:
			static = append(static, c)
		default:
			regular = append(regular, c)
		}
	}
	byName := func(a, b Column[TI]) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(regular, byName)
	slices.SortFunc(static, byName)
	t.Regular, t.Static = regular, static
	if len(t.PartitionKey) == 0 {
		return nil, errorFor(ErrUnknownTable, t, "", "table metadata has no partition key")
	}
	for _, group := range [][]Column[TI]{t.PartitionKey, t.Clustering, t.Static, t.Regular} {
		for i := range group {
			group[i].index = len(t.columns)
			if group[i].isTuple() {
				t.hasTuple = true
				t.tupleKey = t.tupleKey || group[i].Role == PartitionKey || group[i].Role == ClusteringKey
			}
			t.byName[group[i].Name] = group[i].index
			t.columns = append(t.columns, group[i])
		}
	}
	t.stmts = buildStatements(t)
	return t, nil
}
