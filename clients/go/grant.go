package idgen

import (
	"fmt"
	"time"

	"github.com/rs/xid"
)

// The grant-bound generators' rule (docs/formats.md §8), pure: a clock reading in, an id, a
// wait or a renewal out. Pinned by tests/vectors/grant_traces.json like the other clients'.

// Step is what a grant state's Step asks for when it makes no id.
type Step int

const (
	StepID    Step = iota // an id was made
	StepWait              // wait until WaitUntil (clock units)
	StepRenew             // renew the grant (or acquire a new one), bind it, step again
)

func isoMs(unixMs int64) string {
	return time.UnixMilli(unixMs).UTC().Format("2006-01-02T15:04:05.000Z")
}

func clockBefore(msg string) error { return &ClockBeforeWindow{&RegistryError{Message: msg}} }

// SnowflakeGrantState: now in unix ms; Lo, Hi in ms since EpochMs; MaxWait in ms.
type SnowflakeGrantState struct {
	EpochMs   int64
	MaxWait   int64
	Slot      int
	Lo, Hi    int64
	Bound     bool
	ID        int64 // the last step's id
	WaitUntil int64 // the last step's wait, unix ms
	lastMs    int64 // the high-water mark: its ms since the epoch (-1: none) and low 22 bits
	lastLow   int64
}

// NewSnowflakeGrantState has made nothing and is bound to nothing.
func NewSnowflakeGrantState(epochMs, maxWaitMs int64) *SnowflakeGrantState {
	return &SnowflakeGrantState{EpochMs: epochMs, MaxWait: maxWaitMs, lastMs: -1}
}

// Bind to a (renewed or new) grant; the high-water mark stays.
func (s *SnowflakeGrantState) Bind(slot int, lo, hi int64) error {
	if slot < 0 || slot > MaxSnowflakeWorker {
		return fmt.Errorf("snowflake slot %d is outside 0 .. %d", slot, MaxSnowflakeWorker)
	}
	if lo > hi {
		return fmt.Errorf("a grant's window [%d, %d) ends before it starts", lo, hi)
	}
	s.Slot, s.Lo, s.Hi, s.Bound = slot, lo, hi, true
	return nil
}

// Unbind: no grant; every step asks for a renewal.
func (s *SnowflakeGrantState) Unbind() { s.Bound = false }

// Made: whether an id was made; LastMs its ms since the epoch.
func (s *SnowflakeGrantState) Made() bool    { return s.lastMs >= 0 }
func (s *SnowflakeGrantState) LastMs() int64 { return s.lastMs }

// Step makes the next id at now (unix ms), or says to wait or renew.
func (s *SnowflakeGrantState) Step(now int64) (Step, error) {
	if !s.Bound {
		return StepRenew, nil
	}
	t := now - s.EpochMs
	if t >= s.Hi {
		return StepRenew, nil
	}
	if t < s.Lo {
		if s.Lo-t <= s.MaxWait {
			s.WaitUntil = s.EpochMs + s.Lo
			return StepWait, nil
		}
		return 0, clockBefore(say("registry", "clock_before_window", map[string]any{
			"behind": time.Duration(s.Lo-t) * time.Millisecond, "start": time.UnixMilli(s.EpochMs + s.Lo),
			"kind": "snowflake", "slot": s.Slot, "max_wait": time.Duration(s.MaxWait) * time.Millisecond}))
	}
	if t > maxSnowflakeMs {
		return 0, fmt.Errorf("snowflake timestamp out of range: %d ms since the epoch does not fit in 41 bits", t)
	}
	worker := int64(s.Slot) << 12
	var outMs, outLow int64
	switch {
	case s.lastMs < t || (s.lastMs == t && s.lastLow < worker):
		outMs, outLow = t, worker
	case s.lastMs == t && s.lastLow-worker < MaxSnowflakeSequence:
		outMs, outLow = t, s.lastLow+1
	default:
		target := s.lastMs + 1
		if worker|MaxSnowflakeSequence > s.lastLow {
			target = s.lastMs
		}
		if behind := s.lastMs - t; behind > s.MaxWait {
			return 0, &ClockMovedBack{&RegistryError{Message: fmt.Sprintf(
				"the clock moved back %d ms behind the last snowflake id (at most %d ms is waited out)", behind, s.MaxWait)}}
		}
		if target < s.Hi {
			s.WaitUntil = s.EpochMs + target
			return StepWait, nil
		}
		return StepRenew, nil
	}
	if outMs >= s.Hi {
		return StepRenew, nil
	}
	s.lastMs, s.lastLow = outMs, outLow
	s.ID = outMs<<22 | outLow
	return StepID, nil
}

// XidGrantState: now in unix seconds; Lo, Hi and MaxWait in seconds. The machine id is the
// slot; Pid and the counter fill the rest.
type XidGrantState struct {
	MaxWait   int64
	Slot      int
	Lo, Hi    int64
	Bound     bool
	Pid       int
	Counter   uint32 // the counter the next id takes
	ID        xid.ID
	WaitUntil int64
	lastTime  int64 // -1: none
	lastMid   int64
	lastCtr   uint32
}

// NewXidGrantState has made nothing and is bound to nothing.
func NewXidGrantState(pid int, counterStart uint32, maxWait int64) *XidGrantState {
	return &XidGrantState{MaxWait: maxWait, Pid: pid & 0xffff, Counter: counterStart & 0xffffff, lastTime: -1}
}

// Bind to a (renewed or new) grant; the high-water mark stays.
func (s *XidGrantState) Bind(slot int, lo, hi int64) error {
	if slot < 0 || slot > 0xffffff {
		return fmt.Errorf("xid12 slot %d is outside 0 .. 16777215", slot)
	}
	if lo > hi {
		return fmt.Errorf("a grant's window [%d, %d) ends before it starts", lo, hi)
	}
	s.Slot, s.Lo, s.Hi, s.Bound = slot, lo, hi, true
	return nil
}

// Unbind: no grant.
func (s *XidGrantState) Unbind() { s.Bound = false }

// Made: whether an id was made; LastTime its second.
func (s *XidGrantState) Made() bool      { return s.lastTime >= 0 }
func (s *XidGrantState) LastTime() int64 { return s.lastTime }

// Step makes the next id at now (unix s, rounded down), or says to wait or renew.
func (s *XidGrantState) Step(now int64) (Step, error) {
	if !s.Bound {
		return StepRenew, nil
	}
	t := now
	if t >= s.Hi {
		return StepRenew, nil
	}
	if t < s.Lo {
		if s.Lo-t <= s.MaxWait {
			s.WaitUntil = s.Lo
			return StepWait, nil
		}
		return 0, clockBefore(say("registry", "clock_before_window", map[string]any{
			"behind": time.Duration(s.Lo-t) * time.Second, "start": time.Unix(s.Lo, 0),
			"kind": "xid12", "slot": s.Slot, "max_wait": time.Duration(s.MaxWait) * time.Second}))
	}
	mid := int64(s.Slot)<<16 | int64(s.Pid)
	ctr := s.Counter
	if s.lastTime >= 0 {
		if s.lastTime > t {
			t = s.lastTime
		}
		if t == s.lastTime && (mid < s.lastMid || (mid == s.lastMid && ctr <= s.lastCtr)) {
			t = s.lastTime + 1
		}
	}
	if t > 0xffffffff {
		return 0, fmt.Errorf("xid12 time out of range: %d", t)
	}
	if t >= s.Hi {
		return StepRenew, nil
	}
	s.lastTime, s.lastMid, s.lastCtr = t, mid, ctr
	s.Counter = (ctr + 1) & 0xffffff
	s.ID = xidOf(t, mid, ctr)
	return StepID, nil
}

func xidOf(t, mid int64, ctr uint32) xid.ID {
	return xid.ID{byte(t >> 24), byte(t >> 16), byte(t >> 8), byte(t),
		byte(mid >> 32), byte(mid >> 24), byte(mid >> 16), byte(mid >> 8), byte(mid),
		byte(ctr >> 16), byte(ctr >> 8), byte(ctr)}
}
