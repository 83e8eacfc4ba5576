package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
)

// Fault kinds the nemesis mixes.
const (
	faultKillNode     = "kill-node"     // SIGKILL a node, restart it later
	faultPauseNode    = "pause-node"    // SIGSTOP a node, SIGCONT later
	faultDrop         = "drop"          // drop a share of write responses (the write applied)
	faultWriteTimeout = "write-timeout" // answer a share of writes WriteTimeout after applying them
	faultUnavailable  = "unavailable"   // answer a share of writes Unavailable without sending them
	faultLatency      = "latency"       // add latency before every request
	faultKillInstance = "kill-instance" // SIGKILL a service instance mid-request, restart it
	// faultDropCounter drops every response to the counter's UPDATE for a while, and
	// nothing else: the control run's fault (no lost increment can hide a double one).
	faultDropCounter = "drop-counter"
)

var allFaults = []string{faultKillNode, faultPauseNode, faultDrop, faultWriteTimeout, faultUnavailable, faultLatency, faultKillInstance}

// event is one nemesis action, logged with its time.
type event struct {
	At     time.Time
	Fault  string
	Target string
	For    time.Duration
	Err    string
}

// nemesis injects faults into e until ctx ends, one at a time, chosen by a seeded
// generator, and logs each.
type nemesis struct {
	e      *env
	rng    *rand.Rand
	faults []string
	gap    time.Duration // mean pause between faults

	// firstRound is closed when every fault kind has run once (at once without faults).
	firstRound chan struct{}

	mu     sync.Mutex
	events []event
	counts map[string]int
}

func (n *nemesis) log(ev event) {
	n.mu.Lock()
	n.events = append(n.events, ev)
	if n.counts == nil {
		n.counts = map[string]int{}
	}
	n.counts[ev.Fault]++
	n.mu.Unlock()
}

func (n *nemesis) sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// share is a rule applying a to a share of the writes whose text holds substr, seeded.
func share(fraction float64, seed uint64, substr string, a faultproxy.Action) faultproxy.Rule {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 7))
	match := faultproxy.Writes(substr)
	return func(r faultproxy.Request) faultproxy.Action {
		if !match(r) {
			return faultproxy.Forward
		}
		mu.Lock()
		defer mu.Unlock()
		if rng.Float64() < fraction {
			return a
		}
		return faultproxy.Forward
	}
}

// run injects every fault kind once, in a seeded order, then kinds at random, until ctx
// ends; between two faults it waits about gap.
func (n *nemesis) run(ctx context.Context) {
	order := append([]string(nil), n.faults...)
	n.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for k := 0; ctx.Err() == nil; k++ {
		if k == len(order) {
			close(n.firstRound)
		}
		n.sleep(ctx, n.gap/2+time.Duration(n.rng.Int64N(int64(n.gap))))
		if ctx.Err() != nil {
			return
		}
		f := n.faults[n.rng.IntN(len(n.faults))]
		if k < len(order) {
			f = order[k]
		}
		n.inject(ctx, f)
	}
}

// inject runs one fault to its end (the node restarted, the rule lifted).
func (n *nemesis) inject(ctx context.Context, fault string) {
	e := n.e
	d := time.Duration(2+n.rng.IntN(5)) * time.Second
	ev := event{At: time.Now(), Fault: fault, For: d}
	// The fault's own cleanup never uses ctx: the cluster is left whole when the run ends.
	bg := context.Background()
	switch fault {
	case faultKillNode, faultPauseNode:
		i := n.rng.IntN(nodes)
		ev.Target = cluster.Addr(i)
		if fault == faultKillNode {
			if err := cluster.Kill(bg, i); err != nil {
				ev.Err = err.Error()
				break
			}
			n.sleep(ctx, d)
			if err := cluster.Start(bg, i); err != nil {
				ev.Err = "restart: " + err.Error()
			}
			break
		}
		if err := cluster.Pause(bg, i); err != nil {
			ev.Err = err.Error()
			break
		}
		n.sleep(ctx, d)
		if err := cluster.Resume(bg, i); err != nil {
			ev.Err = "resume: " + err.Error()
		}
	case faultDrop, faultWriteTimeout, faultUnavailable, faultDropCounter:
		frac := 0.1 + 0.2*n.rng.Float64()
		ev.Target = fmt.Sprintf("%.0f%% of writes", frac*100)
		a := faultproxy.DropResponse
		switch fault {
		case faultWriteTimeout:
			a = faultproxy.ForwardThenReply(faultproxy.WriteTimeout("SIMPLE"))
		case faultUnavailable:
			a = faultproxy.Reply(faultproxy.Unavailable())
		}
		substr := ""
		if fault == faultDropCounter {
			// Every counter response: each attempt applies, none is answered.
			frac, substr, ev.Target = 1, "customer_stats", "every counter response"
		}
		for i, px := range e.proxies {
			px.SetRule(share(frac, n.rng.Uint64()+uint64(i), substr, a))
		}
		n.sleep(ctx, d)
		e.heal()
	case faultLatency:
		lat := time.Duration(20+n.rng.IntN(180)) * time.Millisecond
		ev.Target = lat.String()
		for _, px := range e.proxies {
			px.SetLatency(lat)
		}
		n.sleep(ctx, d)
		e.heal()
	case faultKillInstance:
		in := e.insts[n.rng.IntN(len(e.insts))]
		ev.Target = fmt.Sprintf("instance %d", in.idx)
		in.kill()
		n.sleep(ctx, d/2)
		if err := in.start(bg); err != nil {
			ev.Err = "restart: " + err.Error()
		}
	}
	n.log(ev)
}

// injected counts the faults of a kind that ran without an error.
func (n *nemesis) injected(fault string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := 0
	for _, ev := range n.events {
		if ev.Fault == fault && ev.Err == "" {
			k++
		}
	}
	return k
}

// around returns the events that overlap [from-slack, to+slack], for a violation's report.
func (n *nemesis) around(from, to time.Time, slack time.Duration) []event {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []event
	for _, ev := range n.events {
		if ev.At.Add(ev.For).After(from.Add(-slack)) && ev.At.Before(to.Add(slack)) {
			out = append(out, ev)
		}
	}
	return out
}

func (n *nemesis) report(t *testing.T) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, ev := range n.events {
		t.Logf("nemesis %s %-13s %-22s for %-4v %s", ev.At.Format("15:04:05.000"), ev.Fault, ev.Target, ev.For, ev.Err)
	}
}
