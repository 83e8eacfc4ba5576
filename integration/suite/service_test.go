package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/examples/orders/shop"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/outbox"
	"github.com/cqlsafe/cqlsafe/retry"
)

// serviceUnderTest is the example service (examples/orders) on a session through a
// fault proxy, served over HTTP, with a direct session to read what Cassandra holds.
type serviceUnderTest struct {
	t      *testing.T
	direct *gocql.Session
	ks     string
	px     *faultproxy.Proxy
	srv    *httptest.Server
	ob     *outbox.Outbox
	policy *retry.Policy
	s      *gocql.Session
}

func startService(t *testing.T) *serviceUnderTest {
	t.Helper()
	ctx := context.Background()
	direct, ks := node.Keyspace(t)
	if err := shop.CreateSchema(ctx, direct, ks, 1); err != nil {
		t.Fatal(err)
	}
	s, px := proxied(t, ks, 400*time.Millisecond)
	ob, err := outbox.Open(filepath.Join(t.TempDir(), "orders.outbox"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ob.Close() })
	policy := retry.NewPolicy(retry.ServicePreset(), retry.WithSchema(retry.SessionSchema(s)), retry.WithOutbox(ob))
	svc, err := shop.New(ctx, s, ks, policy, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(srv.Close)
	return &serviceUnderTest{t: t, direct: direct, ks: ks, px: px, srv: srv, ob: ob, policy: policy, s: s}
}

// call sends a request and decodes the JSON answer into out (when not nil).
func (st *serviceUnderTest) call(method, path, key string, body any, out any) int {
	st.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			st.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, st.srv.URL+path, rd)
	if err != nil {
		st.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := st.srv.Client().Do(req)
	if err != nil {
		st.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			st.t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
	st.t.Logf("%s %s → %d %s", method, path, resp.StatusCode, bytes.TrimSpace(raw))
	return resp.StatusCode
}

// count returns how many rows a query finds (read directly, not through the proxy).
func (st *serviceUnderTest) count(cql string, args ...any) int {
	st.t.Helper()
	var n int64
	if err := st.direct.Query(cql, args...).Scan(&n); err != nil {
		st.t.Fatalf("%s: %v", cql, err)
	}
	return int(n)
}

func (st *serviceUnderTest) counter(customer gocql.UUID) int64 {
	st.t.Helper()
	var n int64
	err := st.direct.Query(`SELECT orders FROM customer_stats WHERE customer = ?`, customer).Scan(&n)
	if err != nil && err != gocql.ErrNotFound {
		st.t.Fatal(err)
	}
	return n
}

// TestExampleServiceUnderFaults drives the example service over HTTP while the fault
// proxy drops the responses of the writes each request makes, and checks what
// Cassandra holds: each acknowledged request applied exactly once, a request sent
// again applied nothing new, a counter never re-sent, an LWT whose answer was lost
// settled, rejected input wrote nothing, a write left unknown kept in the outbox and
// replayed with its timestamp.
func TestExampleServiceUnderFaults(t *testing.T) {
	st := startService(t)
	customer := gocql.MustRandomUUID()
	cpath := "/customers/" + customer.String()

	// Profile replaced twice, the second time without a nickname and with its
	// overwrite's response lost: one row, nickname NULL.
	if c := st.call("PUT", cpath, "", map[string]any{"name": "Ada", "email": "ada@example.com", "nickname": "ada", "tags": []string{"vip"}}, nil); c != 200 {
		t.Fatalf("PUT customer: %d", c)
	}
	st.px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("customers")))
	if c := st.call("PUT", cpath, "", map[string]any{"name": "Ada L.", "email": "ada@example.org", "tags": []string{"vip", "beta"}}, nil); c != 200 {
		t.Fatalf("PUT customer, response dropped: %d", c)
	}
	var name, email string
	var nick *string
	var tags []string
	if err := st.direct.Query(`SELECT name, email, nickname, tags FROM customers WHERE id = ?`, customer).Scan(&name, &email, &nick, &tags); err != nil {
		t.Fatal(err)
	}
	if name != "Ada L." || email != "ada@example.org" || nick != nil || len(tags) != 2 {
		t.Fatalf("customer holds %q %q %v %v; want the second profile, nickname NULL", name, email, nick, tags)
	}

	// An order whose batch response is dropped: acknowledged, applied once, both rows at
	// one pinned timestamp; the counter once.
	placedAt := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	order := map[string]any{"customer": customer, "at": placedAt, "items": []map[string]any{{"sku": "A-1", "qty": 2, "unit_cents": 1250}}}
	st.px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("orders_by_customer")))
	var placed shop.Order
	if c := st.call("POST", "/orders", "req-1", order, &placed); c != 201 {
		t.Fatalf("POST order, response dropped: %d", c)
	}
	if placed.ID != shop.OrderID("req-1") || placed.TotalCents != 2500 {
		t.Fatalf("placed %+v", placed)
	}
	var wOrder, wListing int64
	if err := st.direct.Query(`SELECT WRITETIME(customer) FROM orders WHERE id = ?`, placed.ID).Scan(&wOrder); err != nil {
		t.Fatal(err)
	}
	if err := st.direct.Query(`SELECT WRITETIME(total_cents) FROM orders_by_customer WHERE customer = ? AND id = ?`, customer, placed.ID).Scan(&wListing); err != nil {
		t.Fatal(err)
	}
	if wOrder != wListing {
		t.Errorf("order at %d, listing at %d: one batch, one pinned timestamp expected", wOrder, wListing)
	}
	if n := st.count(`SELECT COUNT(*) FROM orders_by_customer WHERE customer = ?`, customer); n != 1 {
		t.Errorf("listing holds %d rows, want 1", n)
	}
	if n := st.counter(customer); n != 1 {
		t.Errorf("order count %d, want 1", n)
	}
	events := func(id gocql.UUID) int {
		t.Helper()
		var evs []map[string]any
		if c := st.call("GET", "/orders/"+id.String()+"/events", "", nil, &evs); c != 200 {
			t.Fatalf("GET events: %d", c)
		}
		// And what Cassandra holds, every bucket of the stream.
		n := 0
		iter := st.direct.Query(`SELECT bucket FROM order_events_buckets WHERE stream_id = ?`, id.String()).Iter()
		var b int64
		for iter.Scan(&b) {
			n += st.count(`SELECT COUNT(*) FROM order_events WHERE stream_id = ? AND bucket = ?`, id.String(), b)
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		if n != len(evs) {
			t.Errorf("the API shows %d events, Cassandra holds %d", len(evs), n)
		}
		return n
	}
	if n := events(placed.ID); n != 1 {
		t.Errorf("%d events after one order, want 1", n)
	}

	// The same request again: the same order, nothing rewritten, nothing counted twice.
	var again shop.Order
	if c := st.call("POST", "/orders", "req-1", order, &again); c != 200 || again.ID != placed.ID {
		t.Fatalf("POST order again: %d %+v", c, again)
	}
	var wAgain int64
	if err := st.direct.Query(`SELECT WRITETIME(customer) FROM orders WHERE id = ?`, placed.ID).Scan(&wAgain); err != nil {
		t.Fatal(err)
	}
	if wAgain != wOrder || st.counter(customer) != 1 || events(placed.ID) != 1 {
		t.Errorf("after the same request again: WRITETIME %d (was %d), count %d, events %d; want unchanged, 1, 1",
			wAgain, wOrder, st.counter(customer), events(placed.ID))
	}

	// The counter's response dropped: the order stands, the counter was not re-sent.
	st.px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("customer_stats")))
	if c := st.call("POST", "/orders", "req-2", order, nil); c != 201 {
		t.Fatalf("POST order, counter response dropped: %d", c)
	}
	if n := st.counter(customer); n != 2 {
		t.Errorf("order count %d after two orders (one counter response dropped), want 2: a counter is never re-sent", n)
	}

	// A coupon whose LWT answer is lost: settled by a SERIAL read, the order placed; the
	// coupon then refused to another order, which writes nothing.
	withCoupon := map[string]any{"customer": customer, "at": placedAt, "coupon": "WELCOME", "items": []map[string]any{{"sku": "B", "qty": 1, "unit_cents": 99}}}
	st.px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("coupons")))
	var couponed shop.Order
	if c := st.call("POST", "/orders", "req-3", withCoupon, &couponed); c != 201 {
		t.Fatalf("POST order with coupon, LWT response dropped: %d", c)
	}
	var holder gocql.UUID
	if err := st.direct.Query(`SELECT order_id FROM coupons WHERE code = 'WELCOME'`).Scan(&holder); err != nil || holder != couponed.ID {
		t.Fatalf("coupon held by %v (%v), want %v", holder, err, couponed.ID)
	}
	if c := st.call("POST", "/orders", "req-4", withCoupon, nil); c != 409 {
		t.Fatalf("second use of the coupon: %d, want 409", c)
	}
	if n := st.count(`SELECT COUNT(*) FROM orders WHERE id = ?`, shop.OrderID("req-4")); n != 0 {
		t.Errorf("a refused order wrote %d rows", n)
	}

	// A status change whose UPDATE response is dropped, then sent again: the column
	// holds it at the event's time, one event.
	at := time.Now().Add(-time.Minute).UTC().Truncate(time.Microsecond)
	st.px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("SET status")))
	spath := "/orders/" + placed.ID.String() + "/status"
	for i := 0; i < 2; i++ {
		if c := st.call("POST", spath, "pay-1", map[string]any{"status": "paid", "at": at}, nil); c != 200 {
			t.Fatalf("POST status (%d): %d", i, c)
		}
	}
	var status string
	var wStatus int64
	if err := st.direct.Query(`SELECT status, WRITETIME(status) FROM orders WHERE id = ?`, placed.ID).Scan(&status, &wStatus); err != nil {
		t.Fatal(err)
	}
	if status != "paid" || wStatus != at.UnixMicro() {
		t.Errorf("status %q at %d, want paid at %d", status, wStatus, at.UnixMicro())
	}
	if n := events(placed.ID); n != 2 {
		t.Errorf("%d events after an order and one status change sent twice, want 2", n)
	}

	// Delete and undo: the row comes back as it was.
	opath := "/orders/" + placed.ID.String()
	if c := st.call("DELETE", opath, "del-1", nil, nil); c != 200 {
		t.Fatalf("DELETE order: %d", c)
	}
	if n := st.count(`SELECT COUNT(*) FROM orders WHERE id = ?`, placed.ID); n != 0 {
		t.Fatalf("deleted order still holds %d rows", n)
	}
	if c := st.call("POST", opath+"/undelete", "", map[string]any{"command": "del-1"}, nil); c != 200 {
		t.Fatalf("undelete: %d", c)
	}
	var back shop.Order
	if c := st.call("GET", opath, "", nil, &back); c != 200 || back.Status != "paid" || back.TotalCents != 2500 || back.Items["A-1"] != 2 {
		t.Fatalf("after undelete: %d %+v", c, back)
	}

	// Rejected input: 400, nothing written.
	for _, bad := range []map[string]any{
		{"customer": customer, "at": placedAt, "items": []map[string]any{}},
		{"customer": customer, "at": placedAt, "items": []map[string]any{{"sku": "A", "qty": 0, "unit_cents": 1}}},
		{"customer": customer, "at": placedAt, "items": []map[string]any{{"sku": "A", "qty": 1}}, "extra": 1},
		{"customer": customer, "items": []map[string]any{{"sku": "A", "qty": 1}}},
		{"customer": customer, "at": time.Now().Add(time.Hour), "items": []map[string]any{{"sku": "A", "qty": 1}}},
		{"customer": customer, "at": placedAt, "items": []map[string]any{{"sku": "A", "qty": 2_000_000_000_000}}},
	} {
		if c := st.call("POST", "/orders", "bad-1", bad, nil); c != 400 {
			t.Errorf("bad order %v: %d, want 400", bad, c)
		}
	}
	if c := st.call("POST", "/orders", "", order, nil); c != 400 {
		t.Errorf("order without Idempotency-Key: %d, want 400", c)
	}
	if c := st.call("GET", "/orders/not-a-uuid", "", nil, nil); c != 400 {
		t.Errorf("GET a bad id: %d, want 400", c)
	}
	if n := st.count(`SELECT COUNT(*) FROM orders WHERE id = ?`, shop.OrderID("bad-1")); n != 0 {
		t.Errorf("rejected orders wrote %d rows", n)
	}

	// Every response of the order's batch lost: 503 (outcome unknown), the batch kept in
	// the outbox. Sent again, the request completes; the outbox replays the batch with
	// its timestamp: one order, one listing row, at the first attempt's timestamp.
	st.px.SetRule(faultproxy.DropNext(10, faultproxy.Writes("orders_by_customer")))
	order5 := map[string]any{"customer": customer, "at": placedAt, "items": []map[string]any{{"sku": "C", "qty": 3, "unit_cents": 10}}}
	if c := st.call("POST", "/orders", "req-5", order5, nil); c != 503 {
		t.Fatalf("POST order, every batch response dropped: %d, want 503", c)
	}
	st.px.SetRule(nil)
	id5 := shop.OrderID("req-5")
	var w5 int64
	if err := st.direct.Query(`SELECT WRITETIME(customer) FROM orders WHERE id = ?`, id5).Scan(&w5); err != nil {
		t.Fatalf("the batch applied (its responses were dropped), yet: %v", err)
	}
	if c := st.call("POST", "/orders", "req-5", order5, nil); c != 200 {
		t.Fatalf("POST order again after 503: %d, want 200", c)
	}
	var rep outbox.ReplayReport
	if _, err := st.ob.Replay(context.Background(), st.s, st.policy, outbox.ReportTo(&rep)); err != nil {
		t.Fatal(err)
	}
	if rep.Applied != 1 || rep.Kept != 0 {
		t.Errorf("outbox replay: %+v, want the one batch applied", rep)
	}
	var w5after int64
	if err := st.direct.Query(`SELECT WRITETIME(customer) FROM orders WHERE id = ?`, id5).Scan(&w5after); err != nil {
		t.Fatal(err)
	}
	if w5after != w5 {
		t.Errorf("replay moved the order's WRITETIME from %d to %d: it must re-send the pinned timestamp", w5, w5after)
	}
	if n := st.count(`SELECT COUNT(*) FROM orders_by_customer WHERE customer = ? AND id = ?`, customer, id5); n != 1 {
		t.Errorf("listing holds %d rows of order 5, want 1", n)
	}
	if n := events(id5); n != 1 {
		t.Errorf("order 5 has %d events, want 1 (the re-sent request appends the placed event once)", n)
	}
	var cust shop.Customer
	if c := st.call("GET", cpath, "", nil, &cust); c != 200 || cust.Orders != 3 {
		// req-1, req-2, req-3: req-5's first run stopped before its counter.
		t.Errorf("customer: %d, %+v; want 3 orders counted", c, cust)
	}
}

// callBody sends a raw body and returns the status and the answer's text.
func (st *serviceUnderTest) callBody(method, path, key, body string) (int, string) {
	st.t.Helper()
	req, err := http.NewRequest(method, st.srv.URL+path, strings.NewReader(body))
	if err != nil {
		st.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := st.srv.Client().Do(req)
	if err != nil {
		st.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	st.t.Logf("%s %s %s → %d %s", method, path, body, resp.StatusCode, bytes.TrimSpace(raw))
	return resp.StatusCode, string(raw)
}

// TestExampleServiceIdempotentEndpoints: every write endpoint of the example service
// sent again under its Idempotency-Key — with the same body (the first answer again,
// nothing new in Cassandra, also after a dropped response) and with another body (409,
// nothing changed) — and client errors answered 4xx in the API's words.
func TestExampleServiceIdempotentEndpoints(t *testing.T) {
	st := startService(t)
	customer := gocql.MustRandomUUID()
	if c := st.call("PUT", "/customers/"+customer.String(), "", map[string]any{"name": "Ada", "email": "ada@example.com"}, nil); c != 200 {
		t.Fatalf("PUT customer: %d", c)
	}
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	order := map[string]any{"customer": customer, "at": at, "items": []map[string]any{{"sku": "A-1", "qty": 2, "unit_cents": 1250}}}
	var first, again shop.Order
	if c := st.call("POST", "/orders", "o-1", order, &first); c != 201 {
		t.Fatalf("POST order: %d", c)
	}
	if c := st.call("POST", "/orders", "o-1", order, &again); c != 200 || again.ID != first.ID || again.TotalCents != first.TotalCents {
		t.Fatalf("POST order again: %d %+v, want 200 and the first order", c, again)
	}
	other := map[string]any{"customer": customer, "at": at, "items": []map[string]any{{"sku": "A-1", "qty": 3, "unit_cents": 1250}}}
	if c := st.call("POST", "/orders", "o-1", other, nil); c != 409 {
		t.Errorf("POST another order under the key: %d, want 409", c)
	}
	var total int64
	if err := st.direct.Query(`SELECT total_cents FROM orders WHERE id = ?`, first.ID).Scan(&total); err != nil || total != 2500 {
		t.Errorf("order total %d (%v) after the conflicting request, want 2500", total, err)
	}
	nobody := map[string]any{"customer": gocql.MustRandomUUID(), "at": at, "items": []map[string]any{{"sku": "A-1", "qty": 1, "unit_cents": 1}}}
	if c, body := st.callBody("POST", "/orders", "o-2", mustJSON(t, nobody)); c != 400 || !strings.Contains(body, "does not exist") {
		t.Errorf("an order for a customer that does not exist: %d %s, want 400", c, body)
	}
	if n := st.count(`SELECT COUNT(*) FROM orders WHERE id = ?`, shop.OrderID("o-2")); n != 0 {
		t.Errorf("the refused order wrote %d rows", n)
	}

	// A status change, its UPDATE's response dropped; the same request again; the key
	// with another status, or another time.
	spath := "/orders/" + first.ID.String() + "/status"
	when := time.Now().Add(-time.Minute).UTC().Truncate(time.Microsecond)
	st.px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("SET status")))
	for i := 0; i < 2; i++ {
		if c := st.call("POST", spath, "pay-1", map[string]any{"status": "paid", "at": when}, nil); c != 200 {
			t.Fatalf("POST status (%d): %d", i, c)
		}
	}
	for _, body := range []map[string]any{{"status": "shipped", "at": when}, {"status": "paid", "at": when.Add(time.Second)}} {
		if c := st.call("POST", spath, "pay-1", body, nil); c != 409 {
			t.Errorf("the key with %v: %d, want 409", body, c)
		}
	}
	var status string
	var wt int64
	if err := st.direct.Query(`SELECT status, WRITETIME(status) FROM orders WHERE id = ?`, first.ID).Scan(&status, &wt); err != nil || status != "paid" || wt != when.UnixMicro() {
		t.Errorf("status %q at %d (%v), want paid at %d", status, wt, err, when.UnixMicro())
	}
	var evs []map[string]any
	if c := st.call("GET", spath[:len(spath)-len("/status")]+"/events", "", nil, &evs); c != 200 || len(evs) != 2 || evs[1]["payload"] != "paid" {
		t.Errorf("events: %d %v, want placed and paid", c, evs)
	}
	if c := st.call("GET", "/orders/"+gocql.MustRandomUUID().String()+"/events", "", nil, nil); c != 404 {
		t.Errorf("events of an unknown order: %d, want 404", c)
	}

	// Delete, sent again; undelete, sent again; the delete's key once more after the
	// undelete: answered, not deleted anew.
	opath := "/orders/" + first.ID.String()
	var d1, d2 map[string]any
	if c := st.call("DELETE", opath, "del-1", nil, &d1); c != 200 {
		t.Fatalf("DELETE: %d", c)
	}
	if c := st.call("DELETE", opath, "del-1", nil, &d2); c != 200 || fmt.Sprint(d1) != fmt.Sprint(d2) {
		t.Fatalf("DELETE again: %d %v, want 200 and %v", c, d2, d1)
	}
	if n := st.count(`SELECT COUNT(*) FROM orders WHERE id = ?`, first.ID); n != 0 {
		t.Fatalf("deleted order holds %d rows", n)
	}
	for i := 0; i < 2; i++ {
		if c := st.call("POST", opath+"/undelete", "", map[string]any{"command": "del-1"}, nil); c != 200 {
			t.Fatalf("undelete (%d): %d", i, c)
		}
	}
	if c := st.call("DELETE", opath, "del-1", nil, &d2); c != 200 || fmt.Sprint(d1) != fmt.Sprint(d2) {
		t.Errorf("the delete's key after the undelete: %d %v, want the first answer", c, d2)
	}
	if n := st.count(`SELECT COUNT(*) FROM orders WHERE id = ?`, first.ID); n != 1 {
		t.Errorf("the order after the delete's key was sent again: %d rows, want 1 (restored, not deleted anew)", n)
	}
	if c, _ := st.callBody("POST", opath+"/undelete", "", `{}`); c != 400 {
		t.Errorf("undelete without command: %d, want 400", c)
	}
	if c, _ := st.callBody("POST", opath+"/undelete", "", `{"command":"never"}`); c != 404 {
		t.Errorf("undelete by an unknown command: %d, want 404", c)
	}

	// Client errors in the API's words.
	for _, c := range []struct{ body, want string }{
		{`[]`, "a JSON object is expected"},
		{`{"customer":"` + customer.String() + `","at":"` + at.Format(time.RFC3339Nano) + `","items":[{"sku":"B-1","qty":-1,"unit_cents":100}]}`, `items[0] (sku \"B-1\"`},
		{`{"customer":"` + customer.String() + `","items":"x"}`, `field \"items\" must be an array`},
		{`{"customer":`, "ends too early"},
	} {
		code, body := st.callBody("POST", "/orders", "bad-2", c.body)
		if code != 400 || !strings.Contains(body, c.want) || strings.Contains(body, "Go value") || strings.Contains(body, "{SKU:") {
			t.Errorf("POST /orders %s: %d %s, want 400 with %q", c.body, code, body, c.want)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
