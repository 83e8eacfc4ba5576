package shop

import (
	"context"
	"fmt"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/schema"
)

// Tables of the service, besides the event log and the tombstones, which come from
// cqlsafe's templates. Each choice is the one the library's docs recommend:
//   - customers: replaced whole by overwrite.Row, so a profile update leaves one row
//     tombstone instead of one per cleared field; tags is a set (a retried set write
//     changes nothing; a list's would duplicate).
//   - orders: keyed by a UUID derived from the request's Idempotency-Key, so a request
//     sent twice names the same row. items is a map (sku → quantity): re-applied, it
//     writes the same cells.
//   - orders_by_customer: the listing, written with the order in one logged batch.
//   - customer_stats: a counter, the one write that is never re-sent.
//   - coupons: a code is redeemed once, by a lightweight transaction.
var tables = []string{
	`CREATE TABLE IF NOT EXISTS %s.customers (
		id uuid PRIMARY KEY, name text, email text, nickname text, tags set<text>)`,
	`CREATE TABLE IF NOT EXISTS %s.orders (
		id uuid PRIMARY KEY, customer uuid, items map<text, int>, total_cents bigint,
		coupon text, placed_at timestamp, status text)`,
	`CREATE TABLE IF NOT EXISTS %s.orders_by_customer (
		customer uuid, id uuid, total_cents bigint, placed_at timestamp,
		PRIMARY KEY ((customer), id))`,
	`CREATE TABLE IF NOT EXISTS %s.customer_stats (customer uuid PRIMARY KEY, orders counter)`,
	`CREATE TABLE IF NOT EXISTS %s.coupons (code text PRIMARY KEY, order_id uuid)`,
}

// Table names of the templates.
const (
	eventsTable     = "order_events"
	tombstonesTable = "tombstones"
)

// CreateSchema creates the keyspace (SimpleStrategy with replicationFactor) and every
// table the service uses, IF NOT EXISTS: safe to run at every start.
func CreateSchema(ctx context.Context, s *gocql.Session, keyspace string, replicationFactor int) error {
	p := schema.Params{Keyspace: keyspace, ReplicationFactor: replicationFactor}
	if err := schema.ApplyTemplate(ctx, s, "keyspace", p); err != nil {
		return fmt.Errorf("shop: keyspace: %w", err)
	}
	var ddl string
	for _, t := range tables {
		ddl += fmt.Sprintf(t, keyspace) + ";\n"
	}
	if err := schema.Apply(ctx, s, ddl); err != nil {
		return fmt.Errorf("shop: tables: %w", err)
	}
	p.Table = eventsTable
	if err := schema.ApplyTemplate(ctx, s, "eventlog", p); err != nil {
		return fmt.Errorf("shop: event log: %w", err)
	}
	p.Table, p.TTL = tombstonesTable, 30*24*time.Hour
	if err := schema.ApplyTemplate(ctx, s, "tombstones", p); err != nil {
		return fmt.Errorf("shop: tombstones: %w", err)
	}
	return nil
}
