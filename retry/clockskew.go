package retry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/engine"
)

// ErrClockSkew is matched (errors.Is) by *ClockSkewError.
var ErrClockSkew = engine.ErrClockSkew

// ClockOffset is the Policy's clock measured against a Cassandra node's (MeasureClock).
type ClockOffset = engine.ClockOffset

// ClockSkewError is the error of a write the Policy refused because its last
// measurement (MeasureClock) put its clock beyond WithMaxClockOffset of the cluster's.
type ClockSkewError = engine.ClockSkewError

// WithMaxClockOffset bounds how far the Policy's clock may be from the cluster's:
// when MeasureClock finds it further (beyond its uncertainty), the Policy logs a
// warning and refuses writes with a *ClockSkewError — nothing sent — until a later
// MeasureClock finds it within. Reads are never refused. Without it (the default)
// MeasureClock only measures and warns nobody. d must be positive.
func WithMaxClockOffset(d time.Duration) Option { return set(engine.WithMaxClockOffset(d)) }

// clockSamples is how many round trips MeasureClock makes; the fastest decides.
const clockSamples = 5

// MeasureClock measures the Policy's clock against the clock of a node of s: it reads
// the node's time (toUnixTimestamp(now()) from system.local, in milliseconds) between two
// readings of its own and keeps the sample with the shortest round trip. The result is
// kept (ClockOffset) and, with WithMaxClockOffset, decides whether writes are refused.
// Call it at start-up and then every minute or so: clocks drift, and NTP steps them.
func (p *Policy) MeasureClock(ctx context.Context, s *gocql.Session) (ClockOffset, error) {
	if s == nil {
		return ClockOffset{}, errors.New("retry: nil session")
	}
	best := ClockOffset{Uncertainty: time.Duration(1<<63 - 1)}
	for range clockSamples {
		t0 := p.cfg.Clock.Now()
		iter := s.Query(`SELECT toUnixTimestamp(now()) FROM system.local`).WithContext(ctx).Iter()
		var ms int64
		ok := iter.Scan(&ms)
		t1 := p.cfg.Clock.Now()
		host := ""
		if h := iter.Host(); h != nil {
			host = h.ConnectAddressAndPort()
		}
		if err := iter.Close(); err != nil {
			return ClockOffset{}, fmt.Errorf("retry: measure clock: %w", err)
		}
		if !ok {
			return ClockOffset{}, errors.New("retry: measure clock: system.local returned no row")
		}
		// The node read its clock somewhere in [t0, t1]: the midpoint is off by at most
		// half the round trip, and its millisecond reading by up to 1 ms more.
		mid := (t0 + t1) / 2
		o := ClockOffset{Host: host, Offset: time.Duration(ms*1000+500-mid) * time.Microsecond,
			Uncertainty: time.Duration((t1-t0)/2+500) * time.Microsecond}
		if o.Uncertainty < best.Uncertainty {
			best = o
		}
	}
	best.At = time.Now()
	p.e().SetOffset(ctx, best)
	return best, nil
}

// ClockOffset returns the last measurement of MeasureClock (ok false before the first).
func (p *Policy) ClockOffset() (o ClockOffset, ok bool) { return p.e().Offset() }
