package keymigrate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/clientid"
	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	"github.com/cqlsafe/cqlsafe/internal/core/settle"
)

// casSession is a Session whose CAS answers applied and records what it was sent;
// the other methods are not used by the leases' LWTs.
type casSession struct {
	Session
	cas    []string
	cancel func() // called during the first CAS: the worker is stopped as its claim applies
}

func (s *casSession) CAS(ctx context.Context, q string, args []any) (bool, error) {
	s.cas = append(s.cas, q)
	if s.cancel != nil {
		s.cancel()
		s.cancel = nil
	}
	return true, nil
}

func (s *casSession) Class(error) decision.ErrorClass { return decision.ClassNone }
func (s *casSession) SettleLWT(context.Context, string, []any, time.Duration) (settle.LWTOutcome, error) {
	return 0, errors.New("not settled")
}
func (s *casSession) Clock() *clientid.Clock { return clientid.NewClock() }

// A claim that applies as the worker is stopped is given back at once (a release LWT
// with the claim's lease id), not left to hold the range for a lease TTL: the
// multi-worker Ctrl-C test saw one range still claimed after the interrupt.
func TestKeymigrateClaimAppliedAsStoppedIsGivenBack(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := &casSession{cancel: cancel}
	l, err := newLeases(s, "m", "ks", "leases")
	if err != nil {
		t.Fatal(err)
	}
	lease := clientid.NewRandom()
	res, _ := l.claimRange(ctx, 3, "w", lease, 60)
	if res != lwtApplied || ctx.Err() == nil {
		t.Fatalf("claim %v, ctx %v: the fake did not apply the claim while stopping", res, ctx.Err())
	}
	if !l.giveBack(3, lease, res) {
		t.Fatal("the claim was not given back")
	}
	if len(s.cas) != 2 || !strings.HasPrefix(s.cas[1], "DELETE FROM") || !strings.Contains(s.cas[1], "IF lease = ?") {
		t.Fatalf("LWTs sent: %q; want the claim, then its release", s.cas)
	}
	if l.giveBack(3, lease, lwtNotApplied) {
		t.Fatal("a claim that did not apply was released")
	}
}
