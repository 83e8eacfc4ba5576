package schema_test

import (
	"fmt"
	"strings"

	"github.com/cqlsafe/cqlsafe/schema"
)

func ExampleRender() {
	cql, err := schema.Render("eventlog", schema.Params{Keyspace: "app", Table: "orders"})
	if err != nil {
		panic(err)
	}
	for _, line := range strings.Split(cql, "\n") {
		if strings.HasPrefix(line, "CREATE TABLE") {
			fmt.Println(line)
		}
	}
	// Output:
	// CREATE TABLE IF NOT EXISTS "app"."orders" (
	// CREATE TABLE IF NOT EXISTS "app"."orders_buckets" (
}

func ExampleLint() {
	for _, f := range schema.Lint(`CREATE TABLE IF NOT EXISTS views (page text PRIMARY KEY, n counter);`) {
		fmt.Println(f.Severity, f.Rule)
	}
	// Output: error counter
}
