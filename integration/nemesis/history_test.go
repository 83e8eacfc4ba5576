package nemesis

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/examples/orders/shop"
)

// Outcomes of a request, as the client saw it.
const (
	outcomeOK      = "ok"      // a 2xx answer: acknowledged
	outcomeRefused = "refused" // a 4xx answer: nothing applied
	outcomeUnknown = "unknown" // no definite answer after every attempt
)

// op is one request of the history: what was asked, through which instances, when, and
// how it ended. A request is re-sent (same Idempotency-Key, same body) to another
// instance after a 5xx or no answer, as a careful client does.
type op struct {
	ID       int
	Kind     string // "place", "status", "profile"
	Key      string // Idempotency-Key
	Customer gocql.UUID
	Order    gocql.UUID // status: the order
	Status   string     // status: the new status
	At       time.Time  // status: the event time; place: the order's time
	Seq      int        // profile: the put's number for this customer
	Start    time.Time
	End      time.Time
	Tries    []int // instances tried, in order
	// Overlaps counts the attempts the client gave up on (its timeout) before sending
	// the request again: such an attempt may still run while the next one does.
	Overlaps int
	Code     int // the last HTTP status (0: no answer)
	Outcome  string
	Err      string
}

// history is every request of a run.
type history struct {
	mu  sync.Mutex
	ops []*op
}

func (h *history) add(o *op) {
	h.mu.Lock()
	o.ID = len(h.ops)
	h.ops = append(h.ops, o)
	h.mu.Unlock()
}

// client sends requests to the instances of e.
type client struct {
	e    *env
	http *http.Client
	rng  *rand.Rand
}

const maxTries = 6

// send runs o's request, re-sending it after a 5xx or no answer, and records how it ended.
func (c *client) send(ctx context.Context, o *op, method, path string, body any) {
	raw, _ := json.Marshal(body)
	o.Start = time.Now()
	defer func() { o.End = time.Now() }()
	for try := 0; try < maxTries; try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
				o.Outcome = outcomeUnknown
				return
			case <-time.After(time.Duration(100+c.rng.IntN(200)) * time.Millisecond):
			}
		}
		in := c.e.insts[c.rng.IntN(len(c.e.insts))]
		o.Tries = append(o.Tries, in.idx)
		req, err := http.NewRequestWithContext(ctx, method, "http://"+in.addr+path, bytes.NewReader(raw))
		if err != nil {
			panic(err)
		}
		req.Header.Set("Idempotency-Key", o.Key)
		resp, err := c.http.Do(req)
		if err != nil {
			o.Code, o.Err = 0, err.Error()
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && try < maxTries-1 && ctx.Err() == nil {
				o.Overlaps++ // a next attempt follows while this one may still run
			}
			continue
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		o.Code = resp.StatusCode
		switch {
		case resp.StatusCode < 300:
			o.Outcome, o.Err = outcomeOK, ""
			return
		case resp.StatusCode < 500:
			o.Outcome, o.Err = outcomeRefused, string(bytes.TrimSpace(msg))
			return
		}
		o.Err = string(bytes.TrimSpace(msg))
	}
	o.Outcome = outcomeUnknown
}

// worker is one client of the load: it owns its customers (their profile puts and
// status changes are sequential) and places orders for them.
type worker struct {
	c         *client
	h         *history
	id        int
	customers []gocql.UUID
	seq       map[gocql.UUID]int
	orders    []gocql.UUID // acknowledged orders, for status changes
	mix       mix
	afterPut  func(*op)
}

// mix is the share of each request kind (the rest: place).
type mix struct{ status, profile float64 }

func (w *worker) next(ctx context.Context, n int) {
	r := w.c.rng
	cust := w.customers[r.IntN(len(w.customers))]
	o := &op{Customer: cust}
	switch x := r.Float64(); {
	case x < w.mix.profile:
		w.putProfile(ctx, o, fmt.Sprintf("w%d-p%d", w.id, n))
	case x < w.mix.profile+w.mix.status && len(w.orders) > 0:
		o.Kind, o.Key = "status", fmt.Sprintf("w%d-s%d", w.id, n)
		o.Order = w.orders[r.IntN(len(w.orders))]
		o.Status = []string{"paid", "shipped", "delivered", "cancelled"}[r.IntN(4)]
		o.At = time.Now().UTC().Truncate(time.Microsecond)
		w.h.add(o)
		w.c.send(ctx, o, "POST", "/orders/"+o.Order.String()+"/status", map[string]any{"status": o.Status, "at": o.At})
	default:
		o.Kind, o.Key = "place", fmt.Sprintf("w%d-o%d", w.id, n)
		o.At = time.Now().UTC()
		w.h.add(o)
		w.c.send(ctx, o, "POST", "/orders", map[string]any{"customer": cust, "at": o.At,
			"items": []map[string]any{{"sku": fmt.Sprintf("sku-%d", r.IntN(50)), "qty": 1 + r.IntN(5), "unit_cents": 100 + r.IntN(10000)}}})
		if o.Outcome == outcomeOK {
			w.orders = append(w.orders, shop.OrderID(o.Key))
		}
	}
}

// putProfile sends the next profile of o.Customer.
func (w *worker) putProfile(ctx context.Context, o *op, key string) {
	w.seq[o.Customer]++
	o.Kind, o.Key, o.Seq = "profile", key, w.seq[o.Customer]
	w.h.add(o)
	w.c.send(ctx, o, "PUT", "/customers/"+o.Customer.String(), profileBody(o.Customer, o.Seq))
	if o.Outcome == outcomeOK && w.afterPut != nil {
		w.afterPut(o)
	}
}

// profileBody is the profile of a customer's put number seq: every field tells seq.
func profileBody(cust gocql.UUID, seq int) map[string]any {
	b := map[string]any{"name": fmt.Sprintf("name-%d", seq), "email": fmt.Sprintf("%s-%d@example.com", cust, seq),
		"tags": []string{fmt.Sprintf("t%d", seq%7)}}
	if seq%3 == 0 {
		b["nickname"] = fmt.Sprintf("nick-%d", seq)
	}
	return b
}

// load runs workers until ctx ends or limit requests were sent (0: no limit).
// afterPut, when not nil, runs after each acknowledged profile put.
func load(ctx context.Context, e *env, h *history, workers, customersEach int, seed uint64, m mix, limit int64, afterPut func(*op)) {
	var wg sync.WaitGroup
	var sent sync.Mutex
	n := int64(0)
	for i := 0; i < workers; i++ {
		w := &worker{id: i, h: h, seq: map[gocql.UUID]int{}, mix: m, afterPut: afterPut,
			c: &client{e: e, http: &http.Client{Timeout: 4 * time.Second}, rng: rand.New(rand.NewPCG(seed, uint64(i)))}}
		for j := 0; j < customersEach; j++ {
			w.customers = append(w.customers, gocql.UUIDFromTime(time.Unix(int64(i*1000+j), 0)))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Every customer exists before its first order (the service refuses an order
			// for a customer it does not have).
			for j, cust := range w.customers {
				if ctx.Err() == nil {
					w.putProfile(ctx, &op{Customer: cust}, fmt.Sprintf("w%d-init%d", w.id, j))
				}
			}
			for k := 0; ctx.Err() == nil; k++ {
				sent.Lock()
				n++
				over := limit > 0 && n > limit
				sent.Unlock()
				if over {
					return
				}
				w.next(ctx, k)
			}
		}()
	}
	wg.Wait()
}
