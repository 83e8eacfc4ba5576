// Package shop is the example service's domain: customers with replaceable profiles,
// orders placed with an idempotency key, their status history in an event log, coupons
// redeemed once, and deletes that can be undone — each written the way cqlsafe's README
// recommends. The HTTP layer (Handler) only maps requests and errors.
package shop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/eventlog"
	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/settle"
	"github.com/cqlsafe/cqlsafe/tombstone"
)

// Errors the HTTP layer maps to status codes.
var (
	ErrInvalid     = errors.New("invalid request")
	ErrNotFound    = errors.New("not found")
	ErrConflict    = errors.New("conflict")
	ErrUnavailable = errors.New("outcome unknown: send the same request again")
)

// orderNamespace derives an order's id from its Idempotency-Key (UUID v5): the same
// key always names the same order, however often the client sends the request.
var orderNamespace = clientid.FromKey(clientid.NamespaceIdempotencyKey, []byte("cqlsafe-example-orders"))

// Statuses an order moves through, after "placed".
var statuses = map[string]bool{"paid": true, "shipped": true, "delivered": true, "cancelled": true}

// Service is the shop's domain logic on one session and one retry policy.
type Service struct {
	s         *gocql.Session
	ks        string
	policy    *retry.Policy
	log       *slog.Logger
	customers *overwrite.Table
	orders    *overwrite.Table
	events    *eventlog.Log
	tombs     *tombstone.Store
	// settleAfter is how long an LWT whose outcome is unknown waits before the SERIAL
	// read that settles it (past cas_contention_timeout; see settle.LWT).
	settleAfter time.Duration
	naive       bool // NaiveRetries
}

// Option configures a Service.
type Option func(*Service)

// NaiveRetries makes the service write the way cqlsafe replaces, for a control run
// only: the order batch, the counter and the status update are re-sent on any error, up
// to three attempts, each with a fresh timestamp, and no outbox. A lost response to the
// counter's UPDATE then counts an order twice. The nemesis test (integration/nemesis) runs it to show that its checker finds
// what goes wrong.
func NaiveRetries() Option { return func(svc *Service) { svc.naive = true } }

// New binds a Service to the keyspace (made by CreateSchema). Every write goes through
// policy: pinned timestamps, retries only of what is repeatable, its outbox.
func New(ctx context.Context, s *gocql.Session, keyspace string, policy *retry.Policy, log *slog.Logger, opts ...Option) (*Service, error) {
	if s == nil || policy == nil {
		return nil, errors.New("shop: New needs a session and a policy")
	}
	if log == nil {
		log = slog.Default()
	}
	svc := &Service{s: s, ks: keyspace, policy: policy, log: log, settleAfter: 1500 * time.Millisecond}
	for _, o := range opts {
		o(svc)
	}
	var err error
	if svc.customers, err = overwrite.Describe(ctx, s, keyspace, "customers"); err != nil {
		return nil, err
	}
	if svc.orders, err = overwrite.Describe(ctx, s, keyspace, "orders"); err != nil {
		return nil, err
	}
	if svc.events, err = eventlog.New(s, keyspace, eventsTable, eventlog.WithRetryPolicy(policy),
		eventlog.WithBucketWidth(24*time.Hour)); err != nil {
		return nil, err
	}
	if svc.tombs, err = tombstone.New(ctx, s, keyspace, tombstonesTable, tombstone.WithRetryPolicy(policy)); err != nil {
		return nil, err
	}
	return svc, nil
}

// Customer is a customer's profile. Nil or empty fields are stored as NULL.
type Customer struct {
	ID       gocql.UUID `db:"id" json:"id"`
	Name     string     `db:"name" json:"name"`
	Email    string     `db:"email" json:"email"`
	Nickname *string    `db:"nickname" json:"nickname,omitempty"`
	Tags     []string   `db:"tags" json:"tags,omitempty"`
	Orders   int64      `db:"-" json:"orders"` // from the counter, on reads
}

// PutCustomer replaces a customer's profile: one unlogged batch, a row delete and the
// insert of the fields given, so a field left out is NULL afterwards without a cell
// tombstone of its own. Re-sent, it leaves the same row.
func (svc *Service) PutCustomer(ctx context.Context, c Customer) error {
	if c.Name == "" || c.Email == "" {
		return fmt.Errorf("%w: name and email are required", ErrInvalid)
	}
	_, err := overwrite.Row(ctx, svc.s, svc.customers, c, overwrite.WithRetryPolicy(svc.policy))
	return svc.writeErr("put customer", err)
}

// GetCustomer reads a profile and the customer's order count.
func (svc *Service) GetCustomer(ctx context.Context, id gocql.UUID) (Customer, error) {
	c := Customer{ID: id}
	var nick string
	err := svc.s.Query(`SELECT name, email, nickname, tags FROM `+svc.ks+`.customers WHERE id = ?`, id).
		WithContext(ctx).Scan(&c.Name, &c.Email, &nick, &c.Tags)
	if errors.Is(err, gocql.ErrNotFound) {
		return c, ErrNotFound
	}
	if err != nil {
		return c, err
	}
	if nick != "" {
		c.Nickname = &nick
	}
	err = svc.s.Query(`SELECT orders FROM `+svc.ks+`.customer_stats WHERE customer = ?`, id).
		WithContext(ctx).Scan(&c.Orders)
	if err != nil && !errors.Is(err, gocql.ErrNotFound) {
		return c, err
	}
	return c, nil
}

// Item is one line of an order.
type Item struct {
	SKU       string `json:"sku"`
	Qty       int    `json:"qty"`
	UnitCents int64  `json:"unit_cents"`
}

// Order is an order as stored.
type Order struct {
	ID         gocql.UUID     `json:"id"`
	Customer   gocql.UUID     `json:"customer"`
	Items      map[string]int `json:"items"`
	TotalCents int64          `json:"total_cents"`
	Coupon     string         `json:"coupon,omitempty"`
	PlacedAt   time.Time      `json:"placed_at"`
	Status     string         `json:"status"`
}

// OrderID is the id of the order placed with this Idempotency-Key.
func OrderID(idempotencyKey string) gocql.UUID {
	return clientid.FromKey(orderNamespace, []byte(idempotencyKey))
}

// NewOrder is what a client asks for.
type NewOrder struct {
	Customer gocql.UUID `json:"customer"`
	Items    []Item     `json:"items"`
	Coupon   string     `json:"coupon,omitempty"`
	// At is when the order was placed, by the client's clock (required; at most a minute
	// ahead of the server's). A client that re-sends a request sends the same At: the
	// order's time and its "placed" event's id come from it, so even two attempts running
	// at once write one order and one event.
	At time.Time `json:"at"`
}

// Bounds of an order's numbers: the total of 100 items stays far inside int64.
const (
	maxQty       = 1_000_000
	maxUnitCents = 10_000_000_000
	maxFuture    = time.Minute // how far ahead of the server's clock a client's time may be
)

// validAt checks a client's time: given, after 2000, at most maxFuture ahead.
func validAt(at time.Time) error {
	switch {
	case at.IsZero():
		return fmt.Errorf("%w: at (the client's time of the change, RFC 3339) is required", ErrInvalid)
	case at.Year() < 2000 || at.After(time.Now().Add(maxFuture)):
		return fmt.Errorf("%w: at %v is before 2000 or more than %v ahead of this server's clock", ErrInvalid, at, maxFuture)
	}
	return nil
}

// PlaceOrder places an order once per idempotency key. A request sent again with the
// same key returns the order it placed (created is false) and writes nothing new.
//
// The writes, in order: the coupon's LWT (it decides whether the order may use it);
// the order and its listing row in one logged batch through the policy (pinned
// timestamp, retried: a re-sent INSERT rewrites the same cells at the same timestamp);
// the "placed" event (its id from the key and At: appended once); the customer's
// counter, which the policy sends once and never retries — a counter cannot be
// re-applied safely. The count is a statistic: a lost response leaves it one short, and
// two attempts of one request running at once (a client that gave up on the first
// while it still ran) can both find no order and both count it.
//
// A key is remembered as long as its order exists: the same key with another request
// (customer, items, coupon or time) is a conflict, and after a delete the key is free.
func (svc *Service) PlaceOrder(ctx context.Context, key string, req NewOrder) (o Order, created bool, err error) {
	if key == "" || len(key) > 200 {
		return o, false, fmt.Errorf("%w: an Idempotency-Key header of 1 to 200 bytes is required", ErrInvalid)
	}
	if len(req.Items) == 0 || len(req.Items) > 100 {
		return o, false, fmt.Errorf("%w: 1 to 100 items", ErrInvalid)
	}
	if req.Customer == (gocql.UUID{}) {
		return o, false, fmt.Errorf("%w: a customer id is required", ErrInvalid)
	}
	if err := validAt(req.At); err != nil {
		return o, false, err
	}
	if len(req.Coupon) > 64 {
		return o, false, fmt.Errorf("%w: coupon code over 64 bytes", ErrInvalid)
	}
	o = Order{ID: OrderID(key), Customer: req.Customer, Items: map[string]int{}, Coupon: req.Coupon, Status: "placed",
		PlacedAt: req.At.UTC().Truncate(time.Millisecond)} // a timestamp column keeps milliseconds
	for i, it := range req.Items {
		if it.SKU == "" || len(it.SKU) > 64 || it.Qty <= 0 || it.Qty > maxQty || it.UnitCents < 0 || it.UnitCents > maxUnitCents {
			return o, false, fmt.Errorf("%w: items[%d] (sku %q, qty %d, unit_cents %d): a sku of 1 to 64 bytes, qty 1 to %d and unit_cents 0 to %d are required",
				ErrInvalid, i, it.SKU, it.Qty, it.UnitCents, maxQty, int64(maxUnitCents))
		}
		if _, dup := o.Items[it.SKU]; dup {
			return o, false, fmt.Errorf("%w: sku %q given twice", ErrInvalid, it.SKU)
		}
		o.Items[it.SKU] = it.Qty
		o.TotalCents += int64(it.Qty) * it.UnitCents
	}
	customer, coupon := req.Customer, req.Coupon
	if prev, err := svc.GetOrder(ctx, o.ID); err == nil {
		if !sameOrder(prev, o) {
			return prev, false, fmt.Errorf("%w: Idempotency-Key %q was used for another order", ErrConflict, key)
		}
		// The same request again. Its first run may have stopped after the order's batch
		// (a response lost for good): append the "placed" event again — same key, same
		// time, so the same event id, and nothing new if it is there.
		if _, err := svc.events.Append(ctx, o.ID.String(), placedEvent(prev.PlacedAt, key)); err != nil {
			return prev, false, svc.writeErr("placed event", err)
		}
		return prev, false, nil
	} else if !errors.Is(err, ErrNotFound) {
		return o, false, err
	}
	if _, err := svc.GetCustomer(ctx, customer); errors.Is(err, ErrNotFound) {
		return o, false, fmt.Errorf("%w: customer %s does not exist", ErrInvalid, customer)
	} else if err != nil {
		return o, false, err
	}
	if coupon != "" {
		if err := svc.redeem(ctx, coupon, o.ID); err != nil {
			return o, false, err
		}
	}
	b := svc.s.NewBatch(gocql.LoggedBatch).WithContext(ctx)
	b.Query(`INSERT INTO `+svc.ks+`.orders (id, customer, items, total_cents, coupon, placed_at) VALUES (?, ?, ?, ?, ?, ?)`,
		o.ID, o.Customer, o.Items, o.TotalCents, nullable(coupon), o.PlacedAt)
	b.Query(`INSERT INTO `+svc.ks+`.orders_by_customer (customer, id, total_cents, placed_at) VALUES (?, ?, ?, ?)`,
		o.Customer, o.ID, o.TotalCents, o.PlacedAt)
	if err := svc.writeErr("place order", svc.execBatch(ctx, b)); err != nil {
		return o, false, err
	}
	if _, err := svc.events.Append(ctx, o.ID.String(), placedEvent(o.PlacedAt, key)); err != nil {
		return o, false, svc.writeErr("placed event", err)
	}
	err = svc.exec(ctx, svc.s.Query(`UPDATE `+svc.ks+`.customer_stats SET orders = orders + 1 WHERE customer = ?`, customer))
	if err != nil {
		// The order stands; only the statistic may be off by one.
		svc.log.Warn("order count not updated", "customer", customer, "order", o.ID, "err", err)
	}
	return o, true, nil
}

// sameOrder reports whether a stored order is the one a request asks for.
func sameOrder(stored, asked Order) bool {
	if stored.Customer != asked.Customer || stored.TotalCents != asked.TotalCents || stored.Coupon != asked.Coupon ||
		!stored.PlacedAt.Equal(asked.PlacedAt) || len(stored.Items) != len(asked.Items) {
		return false
	}
	for sku, q := range asked.Items {
		if stored.Items[sku] != q {
			return false
		}
	}
	return true
}

// placedEvent is the event of an order placed at (stored to the millisecond, so a
// re-sent request rebuilds it from the row) with the request's key.
func placedEvent(at time.Time, key string) eventlog.Event {
	return eventlog.Event{Time: at, Type: "placed", Key: []byte(key)}
}

// redeem claims a coupon for an order with INSERT … IF NOT EXISTS. An LWT is sent once;
// when its outcome is unknown, settle.LWT reads the row at SERIAL, which completes or
// fences the Paxos round, and says whether it applied.
func (svc *Service) redeem(ctx context.Context, code string, order gocql.UUID) error {
	stmt := retry.Statement{CQL: `INSERT INTO ` + svc.ks + `.coupons (code, order_id) VALUES (?, ?) IF NOT EXISTS`,
		Values: []any{code, order}}
	var holder gocql.UUID
	var gotCode string
	applied, err := svc.s.Query(stmt.CQL, stmt.Values...).WithContext(ctx).
		SerialConsistency(gocql.Serial).ScanCAS(&gotCode, &holder)
	if err != nil {
		// A timeout, a lost connection, CAS_WRITE_UNKNOWN, Unavailable or Overloaded after
		// the proposal was accepted, a cancelled request: the LWT may have applied.
		var casUnknown *gocql.RequestErrCASWriteUnknown
		if !retry.ConditionalMayHaveApplied(err) && !errors.As(err, &casUnknown) {
			return err
		}
		svc.log.Info("coupon outcome unknown: settling", "coupon", code, "order", order, "err", err)
		res, serr := settle.LWT(ctx, svc.s, stmt, settle.After(svc.settleAfter), settle.Keyspace(svc.ks))
		switch {
		case serr != nil:
			return fmt.Errorf("%w: coupon %q: %v", ErrUnavailable, code, serr)
		case res.Outcome == settle.LWTApplied:
			return nil
		case res.Outcome == settle.LWTNotApplied:
			applied = false
			if err := svc.s.Query(`SELECT order_id FROM `+svc.ks+`.coupons WHERE code = ?`, code).
				WithContext(ctx).Consistency(gocql.Consistency(gocql.Serial)).Scan(&holder); err != nil {
				return fmt.Errorf("%w: coupon %q: %v", ErrUnavailable, code, err)
			}
		default:
			return fmt.Errorf("%w: coupon %q: %s", ErrUnavailable, code, res.Why)
		}
	}
	if !applied && holder != order {
		return fmt.Errorf("%w: coupon %q was redeemed by another order", ErrConflict, code)
	}
	return nil
}

// GetOrder reads an order.
func (svc *Service) GetOrder(ctx context.Context, id gocql.UUID) (Order, error) {
	o := Order{ID: id}
	var status string
	err := svc.s.Query(`SELECT customer, items, total_cents, coupon, placed_at, status FROM `+svc.ks+`.orders WHERE id = ?`, id).
		WithContext(ctx).Scan(&o.Customer, &o.Items, &o.TotalCents, &o.Coupon, &o.PlacedAt, &status)
	if errors.Is(err, gocql.ErrNotFound) {
		return o, ErrNotFound
	}
	if err != nil {
		return o, err
	}
	o.PlacedAt = o.PlacedAt.UTC()
	o.Status = "placed"
	if status != "" {
		o.Status = status
	}
	return o, nil
}

// SetStatus records a status change made at at (the client's time, required): an event
// in the order's log, then the order's status column written at the event's time, so
// the column holds the latest acknowledged change, whatever order the requests arrive
// in. A request sent again with the same key, status and time appends nothing new and
// writes the same cell; its key with another status or time is a conflict (the event
// carries its key), and nothing is written. A request whose outcome stayed unknown may
// have appended its event without writing the column (its instance died in between):
// sent again, it completes. (Two requests with one key and different bodies sent at the
// same moment are not told apart: that takes a lightweight transaction per change, as
// the coupon's.)
func (svc *Service) SetStatus(ctx context.Context, id gocql.UUID, key, status string, at time.Time) error {
	if key == "" || len(key) > 200 {
		return fmt.Errorf("%w: an Idempotency-Key header of 1 to 200 bytes is required", ErrInvalid)
	}
	if !statuses[status] {
		return fmt.Errorf("%w: unknown status %q (paid, shipped, delivered, cancelled)", ErrInvalid, status)
	}
	if err := validAt(at); err != nil {
		return err
	}
	at = at.UTC().Truncate(time.Microsecond)
	if _, err := svc.GetOrder(ctx, id); err != nil {
		return err
	}
	history, err := svc.History(ctx, id)
	if err != nil {
		return err
	}
	for _, e := range history {
		if e.Metadata[keyMetadata] != key {
			continue
		}
		if e.Type != "status" || string(e.Payload) != status || !e.Time.Equal(at) {
			return fmt.Errorf("%w: Idempotency-Key %q was used for another change (%s %s at %s)", ErrConflict, key,
				e.Type, e.Payload, e.Time.UTC().Format(time.RFC3339Nano))
		}
	}
	if _, err := svc.events.Append(ctx, id.String(), eventlog.Event{Time: at, Type: "status",
		Payload: []byte(status), Key: []byte(key), Metadata: map[string]string{keyMetadata: key}}); err != nil {
		return svc.writeErr("status event", err)
	}
	err = svc.exec(ctx, svc.s.Query(`UPDATE `+svc.ks+`.orders SET status = ? WHERE id = ?`, status, id),
		retry.AtTimestamp(at.UnixMicro()))
	return svc.writeErr("status", err)
}

// keyMetadata is the event metadata that holds the request's Idempotency-Key.
const keyMetadata = "idempotency_key"

// History is an order's events, oldest first.
func (svc *Service) History(ctx context.Context, id gocql.UUID) ([]eventlog.Event, error) {
	var out []eventlog.Event
	if _, err := svc.GetOrder(ctx, id); err != nil {
		return nil, err // an order that does not exist has no history to show
	}
	for e, err := range svc.events.Read(ctx, id.String(), eventlog.Limit(1000)) {
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// DeleteOrder deletes an order so that it can be undone with the same command id; a
// write racing the delete is never lost (see tombstone.Store.Delete). The command id is
// the request's Idempotency-Key: sent again, the delete it names is answered again and
// nothing is deleted anew (not even after an undelete).
func (svc *Service) DeleteOrder(ctx context.Context, id gocql.UUID, command string) (tombstone.Record, error) {
	if command == "" || len(command) > 200 {
		return tombstone.Record{}, fmt.Errorf("%w: an Idempotency-Key header of 1 to 200 bytes names the delete", ErrInvalid)
	}
	key := map[string]any{"id": id}
	recs, err := svc.tombs.List(ctx, svc.orders, key)
	if err != nil {
		return tombstone.Record{}, err
	}
	for _, r := range recs {
		if r.CommandID == command && r.Action == tombstone.ActionDelete {
			return r, nil // the same request again: the first answer
		}
	}
	rec, err := svc.tombs.Delete(ctx, svc.orders, key, command)
	if errors.Is(err, tombstone.ErrNoRow) {
		return rec, fmt.Errorf("%w: order %s", ErrNotFound, id)
	}
	return rec, svc.writeErr("delete order", err)
}

// UndeleteOrder restores the order deleted by command, if nothing changed it since. Sent
// again after it restored the order, it answers the same.
func (svc *Service) UndeleteOrder(ctx context.Context, id gocql.UUID, command string) error {
	if command == "" {
		return fmt.Errorf("%w: command (the delete's Idempotency-Key) is required", ErrInvalid)
	}
	key := map[string]any{"id": id}
	recs, err := svc.tombs.List(ctx, svc.orders, key)
	if err != nil {
		return err
	}
	// Newest first: the last record is recs[0].
	if len(recs) > 0 && recs[0].Action == tombstone.ActionUndelete && recs[0].CommandID == command {
		return nil // restored by this command: the same request again
	}
	_, err = svc.tombs.Undelete(ctx, svc.orders, key, command)
	switch {
	case errors.Is(err, tombstone.ErrNoTombstone):
		return fmt.Errorf("%w: no delete of order %s by %q", ErrNotFound, id, command)
	case errors.Is(err, tombstone.ErrNotLastDelete), errors.Is(err, tombstone.ErrRowExists), errors.Is(err, tombstone.ErrRestoreShadowed):
		return fmt.Errorf("%w: %v", ErrConflict, err)
	case errors.Is(err, tombstone.ErrNotRestored), errors.Is(err, tombstone.ErrRestoreUnknown):
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return err
}

// exec runs a write through the policy (NaiveRetries: re-sent on any error).
func (svc *Service) exec(ctx context.Context, q *gocql.Query, opts ...retry.ExecOption) error {
	if svc.naive {
		return naive(func() error { return q.WithContext(ctx).Exec() })
	}
	return svc.policy.Exec(ctx, q, opts...)
}

// execBatch runs a batch through the policy (NaiveRetries: re-sent on any error).
func (svc *Service) execBatch(ctx context.Context, b *gocql.Batch) error {
	if svc.naive {
		return naive(func() error { return svc.s.ExecuteBatch(b.WithContext(ctx)) })
	}
	return svc.policy.ExecBatch(ctx, svc.s, b)
}

// naive is the retry loop written by hand that cqlsafe replaces: up to three attempts,
// each with a fresh timestamp, whatever the error and whatever the statement.
func naive(f func() error) error {
	var err error
	for range 3 {
		if err = f(); err == nil {
			return nil
		}
	}
	return err
}

// writeErr turns a write's error into what the client should do: an outcome the
// library could not settle means "send it again" (the write is idempotent by design,
// and with an outbox the service re-applies it itself).
func (svc *Service) writeErr(what string, err error) error {
	if err == nil {
		return nil
	}
	var unknown *retry.OutcomeUnknownError
	var incomplete *eventlog.AppendError
	if errors.As(err, &unknown) || errors.As(err, &incomplete) || errors.Is(err, retry.ErrBatchLogged) {
		svc.log.Warn("write outcome unknown", "what", what, "err", err)
		return fmt.Errorf("%w: %s: %v", ErrUnavailable, what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
