package idgen

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"

	"github.com/rs/xid"
)

// grantGen is what both bound generators share: the grant, its renewal, the state machine.
// mu guards the state and the grant (ids are made under it); opMu serialises the grant's
// operations (acquire, renew, release), which run without mu so ids go on meanwhile.
type grantGen struct {
	reg        *Registry
	kind       string
	lease      string
	mu         sync.Mutex
	opMu       sync.Mutex
	sf         *SnowflakeGrantState
	xs         *XidGrantState
	current    *Grant
	madeUnder  bool
	timer      *time.Timer
	refreshing *refreshCall
}

type refreshCall struct {
	done chan struct{}
	err  error
}

func (g *grantGen) step(now time.Time) (Step, error) {
	if g.sf != nil {
		return g.sf.Step(now.UnixMilli())
	}
	return g.xs.Step(now.Unix())
}

func (g *grantGen) waitUntil() time.Time {
	if g.sf != nil {
		return time.UnixMilli(g.sf.WaitUntil)
	}
	return time.Unix(g.xs.WaitUntil, 0)
}

// bind (under mu) a renewed or new grant and schedules the renewal at half of what was left of
// the window when the server answered, counted from when the statement was sent.
func (g *grantGen) bind(gr *Grant, renewal bool) error {
	if renewal && g.current != nil {
		gr.Lo, gr.LoUs = g.current.Lo, g.current.LoUs
		if g.current.Hi > gr.Hi {
			gr.Hi, gr.HiUs = g.current.Hi, g.current.HiUs
		}
	} else {
		g.madeUnder = false
	}
	var err error
	if g.sf != nil {
		g.sf.EpochMs = gr.EpochMs
		err = g.sf.Bind(gr.Slot, gr.Lo, gr.Hi)
	} else {
		err = g.xs.Bind(gr.Slot, gr.Lo, gr.Hi)
	}
	if err != nil {
		return err
	}
	g.current = gr
	half := time.Duration(gr.HiUs-gr.ServerUs) * time.Microsecond / 2
	g.schedule(max(time.Until(gr.sent.Add(half)), 50*time.Millisecond))
	return nil
}

func (g *grantGen) schedule(d time.Duration) {
	if g.timer != nil {
		g.timer.Stop()
	}
	g.timer = time.AfterFunc(d, g.backgroundRenew)
}

// drop (under mu): no grant.
func (g *grantGen) drop() {
	g.current = nil
	if g.sf != nil {
		g.sf.Unbind()
	} else {
		g.xs.Unbind()
	}
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
}

// renewOrReplace renews the grant; a lost one is replaced by a new grant (never kept).
func (g *grantGen) renewOrReplace() error {
	ctx := context.Background()
	g.mu.Lock()
	cur := g.current
	g.mu.Unlock()
	if cur != nil {
		gr, err := g.reg.call(ctx, func(s *statements) string { return s.renew }, cur.GrantID, cur.Token, leaseArg(g.lease))
		if err == nil {
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.current != cur { // released meanwhile
				return nil
			}
			return g.bind(gr, true)
		}
		var lost *GrantLost
		if !errors.As(err, &lost) {
			return err
		}
		g.mu.Lock()
		g.drop()
		g.mu.Unlock()
	}
	if err := g.reg.checkOpen(); err != nil {
		return err
	}
	gr, err := g.reg.acquire(ctx, g.kind, g.lease)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.bind(gr, false)
}

// refresh: the renewal (or acquire) in flight, else a new one. Ids and the timer share it.
func (g *grantGen) refresh() *refreshCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.refreshing != nil {
		return g.refreshing
	}
	rc := &refreshCall{done: make(chan struct{})}
	g.refreshing = rc
	go func() {
		g.opMu.Lock()
		err := g.renewOrReplace()
		g.opMu.Unlock()
		g.mu.Lock()
		g.refreshing = nil
		g.mu.Unlock()
		rc.err = err
		close(rc.done)
	}()
	return rc
}

func (g *grantGen) backgroundRenew() {
	if g.reg.closed.Load() {
		return
	}
	g.mu.Lock()
	cur := g.current
	g.mu.Unlock()
	rc := g.refresh()
	<-rc.done
	if rc.err == nil || g.reg.closed.Load() || cur == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.current == cur { // unreachable for now: try again soon; the window holds until its end
		lease := time.Duration(cur.HiUs-cur.ServerUs) * time.Microsecond
		g.schedule(min(max(lease/8, 50*time.Millisecond), 5*time.Second))
	}
}

// say (under no lock) the words of an id refused at the window's end (window_...) or without
// a grant (grant_...): suffix "unrenewed" (no answer in time) or "unreachable" (with cause).
func (g *grantGen) say(cur *Grant, suffix string, values map[string]any) string {
	if cur == nil {
		return say("registry", "grant_"+map[string]string{"unrenewed": "unacquired", "unreachable": "unreachable"}[suffix], values)
	}
	values["hi"] = time.UnixMicro(cur.HiUs)
	return say("registry", "window_"+suffix, values)
}

// awaitWindow waits at most RenewWait for the renewal (or new grant).
func (g *grantGen) awaitWindow(ctx context.Context) error {
	g.mu.Lock()
	cur := g.current
	g.mu.Unlock()
	rc := g.refresh()
	t := time.NewTimer(g.reg.opts.RenewWait)
	defer t.Stop()
	select {
	case <-rc.done:
		var un *RegistryUnavailable
		if errors.As(rc.err, &un) {
			return unavailable(g.say(cur, "unreachable", map[string]any{"cause": un.Message}), rc.err)
		}
		return rc.err
	case <-t.C:
		return unavailable(g.say(cur, "unrenewed", map[string]any{"renew_wait": g.reg.opts.RenewWait}), nil)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// next makes an id: at once when the state machine can, else waits, renewals, errors.
func (g *grantGen) next(ctx context.Context) (int64, xid.ID, error) {
	clock := g.reg.opts.Clock
	g.mu.Lock()
	if !g.reg.closed.Load() {
		if st, err := g.step(clock()); err == nil && st == StepID {
			g.madeUnder = true
			sf, x := g.taken()
			g.mu.Unlock()
			return sf, x, nil
		}
	}
	g.mu.Unlock()
	return g.slow(ctx)
}

// taken (under mu): the id the last step made.
func (g *grantGen) taken() (int64, xid.ID) {
	if g.sf != nil {
		return g.sf.ID, xid.ID{}
	}
	return 0, g.xs.ID
}

func (g *grantGen) slow(ctx context.Context) (int64, xid.ID, error) {
	deadline := time.Now().Add(g.reg.opts.MaxWait + time.Second)
	tried := false
	for {
		if err := g.reg.checkOpen(); err != nil {
			return 0, xid.ID{}, err
		}
		if err := ctx.Err(); err != nil {
			return 0, xid.ID{}, err
		}
		now := g.reg.opts.Clock()
		g.mu.Lock()
		st, err := g.step(now)
		if err != nil {
			var cb *ClockBeforeWindow
			if errors.As(err, &cb) && g.current != nil {
				err = clockBefore(say("registry", "clock_behind_server", map[string]any{"behind": -g.offset(), "inner": cb.Message}))
			}
			g.mu.Unlock()
			return 0, xid.ID{}, err
		}
		switch st {
		case StepID:
			g.madeUnder = true
			sf, x := g.taken()
			g.mu.Unlock()
			return sf, x, nil
		case StepWait:
			until := g.waitUntil()
			g.mu.Unlock()
			if time.Now().After(deadline) {
				g.mu.Lock()
				start := time.Time{}
				if g.current != nil {
					start = time.UnixMicro(g.current.LoUs)
				}
				g.mu.Unlock()
				return 0, xid.ID{}, clockBefore(say("registry", "clock_never_reached", map[string]any{"max_wait": g.reg.opts.MaxWait, "now": now, "start": start}))
			}
			if until.Sub(now) <= 2*time.Millisecond {
				// A used-up millisecond: the next one is nearer than a timer's granularity.
				for time.Now().Before(until) && ctx.Err() == nil {
					runtime.Gosched()
				}
				continue
			}
			t := time.NewTimer(until.Sub(now))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return 0, xid.ID{}, ctx.Err()
			}
			continue
		}
		cur := g.current
		g.mu.Unlock()
		if tried {
			if cur != nil {
				hi := time.UnixMicro(cur.HiUs)
				g.mu.Lock()
				ahead := g.offset()
				g.mu.Unlock()
				return 0, xid.ID{}, &ClockAheadOfWindow{&RegistryError{Message: say("registry", "clock_ahead_of_window", map[string]any{
					"ahead": ahead, "now": now, "past": now.Sub(hi), "hi": hi,
					"lease": time.Duration(cur.HiUs-cur.ServerUs) * time.Microsecond})}}
			}
			return 0, xid.ID{}, unavailable(say("registry", "grant_lost_again", nil), nil)
		}
		tried = true
		if err := g.awaitWindow(ctx); err != nil {
			return 0, xid.ID{}, err
		}
	}
}

// offset (under mu): this writer's clock minus the server's at the grant's answer, half the
// round trip taken off.
func (g *grantGen) offset() time.Duration {
	c := g.current
	if c == nil {
		return 0
	}
	return time.UnixMicro(c.wallUs).Sub(time.UnixMicro(c.ServerUs)) - c.rtt/2
}

// releaseGrant releases the grant with the time of the last id made under it.
func (g *grantGen) releaseGrant(ctx context.Context) error {
	g.opMu.Lock()
	defer g.opMu.Unlock()
	g.mu.Lock()
	cur := g.current
	last := "-infinity"
	if g.madeUnder {
		if g.sf != nil {
			last = time.UnixMilli(g.sf.EpochMs + g.sf.LastMs()).UTC().Format(time.RFC3339Nano)
		} else {
			last = time.Unix(g.xs.LastTime(), 0).UTC().Format(time.RFC3339Nano)
		}
	}
	g.drop()
	g.mu.Unlock()
	if cur == nil {
		return nil
	}
	_, err := g.reg.call(ctx, func(s *statements) string { return s.release }, cur.GrantID, cur.Token, last)
	return err
}

// Grant is the grant in use (nil after Release, or while none could be had).
func (g *grantGen) Grant() *Grant {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.current == nil {
		return nil
	}
	c := *g.current
	return &c
}

// GrantSnowflake makes Snowflake ids whose worker id is its grant's slot and whose time is
// inside the grant's window, each greater than the last (across renewals and new grants).
// Safe for concurrent use.
type GrantSnowflake struct{ g *grantGen }

// NextID is the next id; it renews or replaces the grant first when the window has run out,
// waiting at most RenewWait for that.
func (s *GrantSnowflake) NextID(ctx context.Context) (int64, error) {
	id, _, err := s.g.next(ctx)
	return id, err
}

// Grant is the grant in use.
func (s *GrantSnowflake) Grant() *Grant { return s.g.Grant() }

// Release releases the grant now (the next id acquires a new one).
func (s *GrantSnowflake) Release(ctx context.Context) error { return s.g.releaseGrant(ctx) }

// GrantXid12 makes xid.ID values whose machine id is its grant's slot and whose second is
// inside the grant's window, each greater than the last. Safe for concurrent use.
type GrantXid12 struct{ g *grantGen }

// New is the next id (see GrantSnowflake.NextID).
func (x *GrantXid12) New(ctx context.Context) (xid.ID, error) {
	_, id, err := x.g.next(ctx)
	return id, err
}

// Grant is the grant in use.
func (x *GrantXid12) Grant() *Grant { return x.g.Grant() }

// Release releases the grant now.
func (x *GrantXid12) Release(ctx context.Context) error { return x.g.releaseGrant(ctx) }
