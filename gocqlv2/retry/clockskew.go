package retry

import (
	"context"
	"errors"
	"fmt"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

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

// MeasureClock measures the Policy's clock against the clock of a node of s: it reads
// the node's time (toUnixTimestamp(now()) from system.local, in milliseconds) between two
// readings of its own and keeps the sample with the shortest round trip. The result is
// kept (ClockOffset) and, with WithMaxClockOffset, decides whether writes are refused.
// Call it at start-up and then every minute or so: clocks drift, and NTP steps them.
func (p *Policy) MeasureClock(ctx context.Context, s *gocql.Session) (ClockOffset, error) {
	if s == nil {
		return ClockOffset{}, errors.New("retry: nil session")
	}
	return p.e().MeasureClock(ctx, func() (int64, string, error) {
		iter := s.Query(`SELECT toUnixTimestamp(now()) FROM system.local`).IterContext(ctx)
		var ms int64
		ok := iter.Scan(&ms)
		host := ""
		if h := iter.Host(); h != nil {
			host = h.ConnectAddressAndPort()
		}
		if err := iter.Close(); err != nil {
			return 0, "", fmt.Errorf("retry: measure clock: %w", err)
		}
		if !ok {
			return 0, "", errors.New("retry: measure clock: system.local returned no row")
		}
		return ms, host, nil
	})
}

// ClockOffset returns the last measurement of MeasureClock (ok false before the first).
func (p *Policy) ClockOffset() (o ClockOffset, ok bool) { return p.e().Offset() }
