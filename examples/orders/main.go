// Command orders is cqlsafe's example service: a small HTTP/JSON shop (customers,
// orders, status history, coupons, undoable deletes) written the way cqlsafe's README
// recommends. Run it against any Cassandra 4.1+:
//
//	scripts/native-node.sh start            # or any node; prints 127.0.0.1:9042
//	go run ./examples/orders --hosts 127.0.0.1:9042
//
// See README.md beside this file for requests to send it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/examples/orders/shop"
	"github.com/cqlsafe/cqlsafe/outbox"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/schema"
)

// config is the service's configuration: flags, defaulting to environment variables.
type config struct {
	hosts          string
	keyspace       string
	rf             int
	listen         string
	outbox         string
	timeout        time.Duration
	maxClockOffset time.Duration
	clockOffset    time.Duration // shifts this instance's clock: for skew drills only
	replayEvery    time.Duration
	measureEvery   time.Duration
	startTimeout   time.Duration
	addressMap     map[string]string // node address → the host:port to dial instead
	naiveRetries   bool              // the nemesis test's control run only
}

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	cfg, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0) // -h, --help: the flags were printed
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "orders:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Error("orders stopped", "err", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("orders", flag.ContinueOnError)
	var c config
	fs.StringVar(&c.hosts, "hosts", envOr("CQLSAFE_CASSANDRA_HOSTS", "127.0.0.1:9042"), "Cassandra contact points, comma-separated host:port")
	fs.StringVar(&c.keyspace, "keyspace", "shop", "keyspace, created with the tables when missing")
	fs.IntVar(&c.rf, "replication-factor", 1, "replication factor of the keyspace when it is created")
	fs.StringVar(&c.listen, "listen", "127.0.0.1:8080", "HTTP address")
	fs.StringVar(&c.outbox, "outbox", "orders.outbox", "file keeping writes whose outcome stayed unknown, replayed at start and periodically")
	fs.DurationVar(&c.timeout, "timeout", 2*time.Second, "per-request Cassandra timeout")
	fs.DurationVar(&c.maxClockOffset, "max-clock-offset", time.Second, "refuse writes while this instance's clock is further than this from the cluster's")
	fs.DurationVar(&c.clockOffset, "clock-offset", 0, "shift this instance's write clock (skew drills only)")
	fs.DurationVar(&c.replayEvery, "replay-every", 30*time.Second, "how often the outbox is replayed")
	fs.DurationVar(&c.measureEvery, "measure-clock-every", time.Minute, "how often the clock is measured against the cluster's")
	fs.DurationVar(&c.startTimeout, "start-timeout", time.Minute, "how long start-up tries the schema and statements again while Cassandra times out or is unavailable")
	var addrMap string
	fs.StringVar(&addrMap, "address-map", "", "dial other addresses than the nodes announce (NAT, proxies): ip=ip:port,…, one IP per node")
	fs.BoolVar(&c.naiveRetries, "naive-retries", false, "re-send writes on any error with fresh timestamps: a control run's broken service, never for production")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	switch {
	case c.keyspace == "":
		return c, errors.New("--keyspace is empty")
	case c.timeout <= 0 || c.maxClockOffset <= 0 || c.replayEvery <= 0 || c.measureEvery <= 0 || c.startTimeout <= 0:
		return c, errors.New("--timeout, --max-clock-offset, --replay-every, --measure-clock-every and --start-timeout must be more than 0")
	case c.rf < 1:
		return c, fmt.Errorf("--replication-factor must be at least 1 (got %d)", c.rf)
	}
	if addrMap != "" {
		c.addressMap = map[string]string{}
		for _, pair := range strings.Split(addrMap, ",") {
			ip, to, ok := strings.Cut(pair, "=")
			host, port, err := net.SplitHostPort(to)
			if n, perr := strconv.Atoi(port); !ok || err != nil || perr != nil || n < 1 || n > 65535 ||
				net.ParseIP(ip) == nil || net.ParseIP(host) == nil {
				return c, fmt.Errorf("--address-map: %q is not ip=ip:port", pair)
			}
			node := net.ParseIP(ip).String()
			if _, dup := c.addressMap[node]; dup {
				return c, fmt.Errorf("--address-map: node %s given twice", node)
			}
			c.addressMap[node] = to
		}
		// gocql (v1.7, and the v2 driver) takes hosts out of its query plan by IP alone:
		// when one of two nodes dialled at the same IP goes down, both leave it.
		byIP := map[string]string{}
		for node, to := range c.addressMap {
			host, _, _ := net.SplitHostPort(to)
			ip := net.ParseIP(host).String()
			if other, dup := byIP[ip]; dup {
				return c, fmt.Errorf("--address-map: nodes %s and %s are both dialled at %s: give each node its own IP "+
					"(gocql drops every host of an IP from its query plan when one of them goes down)", min(node, other), max(node, other), ip)
			}
			byIP[ip] = node
		}
	}
	return c, nil
}

// translator dials the addresses of --address-map instead of those the nodes announce.
func translator(m map[string]string) gocql.AddressTranslator {
	return gocql.AddressTranslatorFunc(func(ip net.IP, port int) (net.IP, int) {
		to, ok := m[ip.String()]
		if !ok {
			return ip, port
		}
		host, p, _ := net.SplitHostPort(to)
		n, _ := strconv.Atoi(p)
		return net.ParseIP(host), n
	})
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, cfg config, log *slog.Logger) error {
	cluster := gocql.NewCluster(strings.Split(cfg.hosts, ",")...)
	cluster.Timeout = cfg.timeout
	cluster.ConnectTimeout = 5 * time.Second
	cluster.Consistency = gocql.LocalQuorum
	if cfg.addressMap != nil {
		cluster.AddressTranslator = translator(cfg.addressMap)
	}
	session, err := cluster.CreateSession()
	if err != nil {
		return fmt.Errorf("connect to %s: %w", cfg.hosts, err)
	}
	defer session.Close()
	// A node restarting or paused can time out a DDL or a read of the schema: start-up
	// tries again (only creates IF NOT EXISTS and reads) rather than exit.
	startBy := time.Now().Add(cfg.startTimeout)
	if err := untilStarted(ctx, startBy, log, "schema", func(ctx context.Context) error {
		return shop.CreateSchema(ctx, session, cfg.keyspace, cfg.rf)
	}); err != nil {
		return err
	}

	ob, err := outbox.Open(cfg.outbox)
	if err != nil {
		return err
	}
	defer ob.Close()
	clock := clientid.NewClock()
	if cfg.clockOffset != 0 {
		clock = clientid.NewClockFunc(func() time.Time { return time.Now().Add(cfg.clockOffset) })
	}
	policy := retry.NewPolicy(retry.ServicePreset(),
		retry.WithSchema(retry.SessionSchema(session)),
		retry.WithOutbox(ob),
		retry.WithClock(clock),
		retry.WithMaxClockOffset(cfg.maxClockOffset),
		retry.WithLogger(log))
	if err := policy.Err(); err != nil {
		return err
	}
	var opts []shop.Option
	if cfg.naiveRetries {
		log.Warn("--naive-retries: writes are re-sent on any error with fresh timestamps; this instance can apply a write twice")
		opts = append(opts, shop.NaiveRetries())
	}
	var svc *shop.Service
	if err := untilStarted(ctx, startBy, log, "service", func(ctx context.Context) (err error) {
		svc, err = shop.New(ctx, session, cfg.keyspace, policy, log, opts...)
		return err
	}); err != nil {
		return err
	}

	// Before serving: where this clock stands, and the writes a previous run left unknown.
	measure(ctx, policy, session, log)
	replay(ctx, ob, session, policy, log)

	srv := &http.Server{Addr: cfg.listen, Handler: svc.Handler(), ReadHeaderTimeout: 5 * time.Second,
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return err
	}
	log.Info("orders serving", "addr", ln.Addr().String(), "keyspace", cfg.keyspace, "hosts", cfg.hosts)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	replayT := time.NewTicker(cfg.replayEvery)
	defer replayT.Stop()
	measureT := time.NewTicker(cfg.measureEvery)
	defer measureT.Stop()
	for {
		select {
		case err := <-served:
			return err
		case <-replayT.C:
			replay(ctx, ob, session, policy, log)
		case <-measureT.C:
			measure(ctx, policy, session, log)
		case <-ctx.Done():
			// Finish the requests in flight, then replay what they left unknown once more.
			log.Info("orders shutting down")
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := srv.Shutdown(sctx)
			replay(sctx, ob, session, policy, log)
			return err
		}
	}
}

// untilStarted runs a start-up step, again after a pause while it fails with an error
// Cassandra may get over (a timeout, unavailable replicas, no host up, schemas not yet
// in agreement) and the time is before by. Other errors, such as a malformed name or a
// missing permission, end start-up at once.
func untilStarted(ctx context.Context, by time.Time, log *slog.Logger, step string, f func(context.Context) error) error {
	pause := 250 * time.Millisecond
	for try := 1; ; try++ {
		err := f(ctx)
		if err == nil || !transientAtStart(err) || ctx.Err() != nil || time.Now().Add(pause).After(by) {
			return err
		}
		log.Warn("start-up step failed; trying again", "step", step, "try", try, "err", err, "pause", pause.String())
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// transientAtStart says whether a start-up error may go away on its own.
func transientAtStart(err error) bool {
	if errors.Is(err, schema.ErrNoAgreement) {
		return true
	}
	switch retry.ClassifyError(err) {
	case retry.ClassFatal, retry.ClassCanceled, retry.ClassNone:
		return false
	}
	return true
}

// measure reads a node's clock against the policy's; beyond --max-clock-offset the
// policy refuses writes (503) until a later measurement is within.
func measure(ctx context.Context, p *retry.Policy, s *gocql.Session, log *slog.Logger) {
	o, err := p.MeasureClock(ctx, s)
	if err != nil {
		log.Warn("clock not measured", "err", err)
		return
	}
	log.Info("clock measured", "offset", o.Offset.String(), "uncertainty", o.Uncertainty.String(), "host", o.Host)
}

// replay re-sends the writes whose outcome stayed unknown, with their original
// timestamps: applying one again changes nothing if it had applied.
func replay(ctx context.Context, ob *outbox.Outbox, s *gocql.Session, p *retry.Policy, log *slog.Logger) {
	var rep outbox.ReplayReport
	_, err := ob.Replay(ctx, s, p, outbox.ReportTo(&rep))
	if err != nil || rep.Applied > 0 || rep.Kept > 0 {
		log.Info("outbox replayed", "applied", rep.Applied, "past_ttl", rep.Expired, "kept", rep.Kept, "err", err)
	}
}
