package faultproxy_test

import (
	"fmt"
	"log"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
)

// Drop the response to the next INSERT INTO orders after Cassandra applied it: the
// client sees a timeout for a write that happened.
func ExampleDropNext() {
	px, err := faultproxy.Start("127.0.0.1:9042") // the node; connect clients to px.Addr()
	if err != nil {
		log.Fatal(err)
	}
	defer px.Close()
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("INSERT INTO orders")))
	fmt.Println(px.Stats().Dropped.Load())
	// Output: 0
}
