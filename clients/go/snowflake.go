package idgen

import (
	"fmt"
	"time"
)

// DefaultSnowflakeEpochMs is pg_idgen.snowflake_epoch's default (unix ms, 2010-11-04 01:42:54.657 UTC).
const DefaultSnowflakeEpochMs int64 = 1288834974657

// The layout of a Snowflake id (docs/formats.md §5): 41 bits of ms, 10 of worker, 12 of sequence.
const (
	MaxSnowflakeWorker   = 1023
	MaxSnowflakeSequence = 4095
	maxSnowflakeMs       = 1<<41 - 1
)

// Snowflake is a Snowflake id taken apart.
type Snowflake struct {
	MsSinceEpoch int64 // id >> 22
	UnixMs       int64 // MsSinceEpoch + the epoch
	Worker       int   // 0 .. 1023
	Sequence     int   // 0 .. 4095
}

// Time is the id's moment.
func (s Snowflake) Time() time.Time { return time.UnixMilli(s.UnixMs).UTC() }

// DecodeSnowflake takes an id apart with the epoch epochMs (unix ms); a negative id is no
// Snowflake id.
func DecodeSnowflake(id int64, epochMs int64) (Snowflake, error) {
	if id < 0 {
		return Snowflake{}, fmt.Errorf("invalid snowflake id %d: snowflake ids are never negative", id)
	}
	ms := id >> 22
	return Snowflake{MsSinceEpoch: ms, UnixMs: ms + epochMs, Worker: int(id>>12) & MaxSnowflakeWorker, Sequence: int(id) & MaxSnowflakeSequence}, nil
}

// SnowflakeID builds the id of (ms since the epoch, worker, sequence).
func SnowflakeID(ms int64, worker, sequence int) int64 {
	return ms<<22 | int64(worker)<<12 | int64(sequence)
}
