package outbox_test

import (
	"context"
	"log"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/outbox"
	"github.com/cqlsafe/cqlsafe/retry"
)

func Example() {
	var session *gocql.Session // your session
	if session == nil {
		return
	}
	ob, err := outbox.Open("/var/lib/orders/cqlsafe.outbox")
	if err != nil {
		log.Fatal(err)
	}
	defer ob.Close()
	// Writes whose outcome stays unknown are kept, with their pinned timestamps.
	policy := retry.NewPolicy(retry.WithOutbox(ob))
	_ = policy.Exec(context.Background(), session.Query(`INSERT INTO orders (id, total) VALUES (?, ?)`, 7, 1250))

	// Later (at start-up, on a timer): re-apply them. Same statements, same
	// timestamps: applying twice is applying once, and a newer write is never overwritten.
	applied, err := ob.Replay(context.Background(), session, policy)
	log.Println(applied, err)
}
