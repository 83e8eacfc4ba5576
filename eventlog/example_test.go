package eventlog_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/eventlog"
	"github.com/cqlsafe/cqlsafe/schema"
)

func Example() {
	var session *gocql.Session // your session
	if session == nil {
		return
	}
	ctx := context.Background()
	if err := schema.ApplyTemplate(ctx, session, "eventlog", schema.Params{Keyspace: "app"}); err != nil {
		log.Fatal(err)
	}
	l, err := eventlog.New(session, "app", "events")
	if err != nil {
		log.Fatal(err)
	}
	changedAt := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC) // when it happened
	_, err = l.Append(ctx, "user-42", eventlog.Event{Time: changedAt, Type: "email", Payload: []byte("ada@example.com"),
		Key: []byte("request-7f3a")}) // a re-submitted request appends nothing new
	if err != nil {
		log.Fatal(err)
	}
	state, err := eventlog.Fold(l.Read(ctx, "user-42"))
	fmt.Println(string(state["email"].Payload), err)
}
