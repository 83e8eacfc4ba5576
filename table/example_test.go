package table_test

import (
	"context"
	"fmt"
	"log"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/table"
)

type Profile struct {
	UserID int     `db:"user_id"`
	Name   string  `db:"name"`
	Email  *string `db:"email"` // nil: UNSET, nothing written
}

func ExampleDescribe() {
	var session *gocql.Session // your session
	if session == nil {
		return
	}
	ctx := context.Background()
	profiles, err := table.Describe(ctx, session, "app", "profiles")
	if err != nil {
		log.Fatal(err)
	}
	// An upsert of the row at a pinned timestamp, without a TTL (UNSET: the table's
	// default_time_to_live applies).
	vals, err := profiles.Values(Profile{UserID: 42, Name: "Ada"})
	if err != nil {
		log.Fatal(err) // e.g. table.ErrMissingKey: nothing was sent
	}
	const ts = 1_763_700_000_000_000
	q := session.Query(profiles.Insert(table.UsingTTL|table.UsingTimestamp), append(vals, gocql.UnsetValue, ts)...)
	if err := q.WithContext(ctx).Exec(); err != nil {
		log.Fatal(err)
	}
}

func ExampleTable_Values() {
	// What Describe builds from the session's metadata of
	// CREATE TABLE app.profiles (user_id int PRIMARY KEY, name text, email text).
	text := cqlvalue.NativeType(0, gocql.TypeVarchar, "")
	cols := map[string]*gocql.ColumnMetadata{
		"user_id": cqlvalue.Column("user_id", gocql.ColumnPartitionKey, "int", cqlvalue.NativeType(0, gocql.TypeInt, "")),
		"name":    cqlvalue.Column("name", gocql.ColumnRegular, "text", text),
		"email":   cqlvalue.Column("email", gocql.ColumnRegular, "text", text),
	}
	profiles, err := table.FromMetadata(&gocql.TableMetadata{Keyspace: "app", Name: "profiles", Columns: cols,
		PartitionKey: []*gocql.ColumnMetadata{cols["user_id"]}})
	if err != nil {
		log.Fatal(err)
	}
	vals, _ := profiles.Values(Profile{UserID: 42, Name: ""})
	fmt.Println(profiles.Insert(table.UsingTimestamp))
	for i, c := range profiles.Columns() {
		if vals[i] == gocql.UnsetValue {
			fmt.Printf("%s: UNSET\n", c.Name)
		} else {
			fmt.Printf("%s: %q\n", c.Name, fmt.Sprint(vals[i]))
		}
	}
	key, _ := profiles.KeyValues(map[string]any{"user_id": 42})
	b, _ := profiles.EncodeKey(key)
	back, _ := profiles.DecodeKey(b)
	fmt.Printf("key %v encodes as %x\n", back, b)
	sel, _ := profiles.SelectByKey(table.CellValue|table.CellWriteTime, "name")
	fmt.Println(sel)
	// Output:
	// INSERT INTO "app"."profiles" ("user_id", "email", "name") VALUES (?, ?, ?) USING TIMESTAMP ?
	// user_id: "42"
	// email: UNSET
	// name: ""
	// key [42] encodes as 000000040000002a
	// SELECT "name", WRITETIME("name") FROM "app"."profiles" WHERE "user_id" = ?
}
