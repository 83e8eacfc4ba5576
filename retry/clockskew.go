package retry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gocql/gocql"
)

// ErrClockSkew is matched (errors.Is) by *ClockSkewError.
var ErrClockSkew = errors.New("retry: clock skew")

// ClockOffset is the Policy's clock measured against a Cassandra node's (MeasureClock).
type ClockOffset struct {
	Host string // the node that answered
	// Offset is the node's clock minus the Policy's: positive when this process lags.
	// Client timestamps decide which write wins, so a process that lags by d loses to
	// writes stamped up to d earlier in real time by processes in step with the node.
	Offset time.Duration
	// Uncertainty bounds the error of Offset: half the round trip of the best of the
	// samples, plus the node clock's millisecond resolution.
	Uncertainty time.Duration
	At          time.Time // when it was measured (this process's wall clock)
}

// Beyond reports whether the offset is beyond bound even at the edge of its
// uncertainty: |Offset| - Uncertainty > bound.
func (o ClockOffset) Beyond(bound time.Duration) bool {
	return max(o.Offset, -o.Offset)-o.Uncertainty > bound
}

func (o ClockOffset) String() string {
	dir := "behind"
	if o.Offset < 0 {
		dir = "ahead of"
	}
	return fmt.Sprintf("%v %s node %s (±%v)", max(o.Offset, -o.Offset).Round(time.Microsecond), dir, o.Host, o.Uncertainty.Round(time.Microsecond))
}

// ClockSkewError is the error of a write the Policy refused because its last
// measurement (MeasureClock) put its clock beyond WithMaxClockOffset of the cluster's.
type ClockSkewError struct {
	Offset ClockOffset
	Bound  time.Duration
}

func (e *ClockSkewError) Error() string {
	return fmt.Sprintf("retry: this process's clock is %s, beyond the bound of %v: writes are refused until MeasureClock finds it within (nothing sent)", e.Offset, e.Bound)
}

// Is makes errors.Is(err, ErrClockSkew) true.
func (e *ClockSkewError) Is(target error) bool { return target == ErrClockSkew }

// WithMaxClockOffset bounds how far the Policy's clock may be from the cluster's:
// when MeasureClock finds it further (beyond its uncertainty), the Policy logs a
// warning and refuses writes with a *ClockSkewError — nothing sent — until a later
// MeasureClock finds it within. Reads are never refused. Without it (the default)
// MeasureClock only measures and warns nobody. d must be positive.
func WithMaxClockOffset(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("retry: WithMaxClockOffset(%v): the bound must be positive", d)
		}
		c.maxOffset = d
		return nil
	}
}

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
		t0 := p.cfg.clock.Now()
		iter := s.Query(`SELECT toUnixTimestamp(now()) FROM system.local`).WithContext(ctx).Iter()
		var ms int64
		ok := iter.Scan(&ms)
		t1 := p.cfg.clock.Now()
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
	p.offset.Store(&best)
	if p.cfg.maxOffset > 0 && best.Beyond(p.cfg.maxOffset) && p.cfg.logger != nil {
		p.cfg.logger.WarnContext(ctx, "cqlsafe: clock skew beyond the bound: writes refused",
			"offset", best.Offset, "uncertainty", best.Uncertainty, "host", best.Host, "bound", p.cfg.maxOffset)
	}
	return best, nil
}

// ClockOffset returns the last measurement of MeasureClock (ok false before the first).
func (p *Policy) ClockOffset() (o ClockOffset, ok bool) {
	if m := p.offset.Load(); m != nil {
		return *m, true
	}
	return ClockOffset{}, false
}

// refuseSkewed is the error of a write while the last measurement is beyond the bound.
func (p *Policy) refuseSkewed() error {
	if p.cfg.maxOffset <= 0 {
		return nil
	}
	if m := p.offset.Load(); m != nil && m.Beyond(p.cfg.maxOffset) {
		return &ClockSkewError{Offset: *m, Bound: p.cfg.maxOffset}
	}
	return nil
}
