package clientid

import (
	"crypto/rand"
	"crypto/sha1"
	"encoding/binary"
	mrand "math/rand/v2"
	"time"
)

func setVersion(u *[16]byte, v byte) {
	u[6] = u[6]&0x0f | v<<4
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant 10xx
}

// NewRandom returns a random (version 4) UUID from crypto/rand.
func NewRandom() [16]byte {
	var u [16]byte
	_, _ = rand.Read(u[:]) // never fails since Go 1.24: it crashes the program instead
	setVersion(&u, 4)
	return u
}

// FromKey returns the name-based (version 5, SHA-1) UUID of key in namespace, RFC 9562
// section 5.5: the same namespace and key always give the same UUID, so an idempotency
// key maps to one id however often a request is re-submitted.
func FromKey(namespace [16]byte, key []byte) [16]byte {
	h := sha1.New()
	h.Write(namespace[:])
	h.Write(key)
	var sum [sha1.Size]byte
	h.Sum(sum[:0])
	var u [16]byte
	copy(u[:], sum[:16])
	setVersion(&u, 5)
	return u
}

// NewV7 returns a time-ordered (version 7) UUID for the current time.
func NewV7() [16]byte { return NewV7At(time.Now()) }

// NewV7At returns a version 7 UUID (RFC 9562 section 5.7) whose 48-bit Unix-millisecond
// prefix is t, followed by 74 random bits. Byte order is time order at millisecond
// precision; within a millisecond the order is random. Cassandra's uuid type compares
// UUIDs of the same (non-1) version as unsigned bytes, so v7 keys cluster by creation
// time. For a timeuuid column use NewTimeUUID instead: timeuuid accepts only version 1.
// Times before 1970 or after year 10889 are clamped.
func NewV7At(t time.Time) [16]byte {
	ms := t.UnixMilli()
	if ms < 0 {
		ms = 0
	} else if ms > 1<<48-1 {
		ms = 1<<48 - 1
	}
	var u [16]byte
	_, _ = rand.Read(u[6:])
	u[0], u[1], u[2], u[3], u[4], u[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	setVersion(&u, 7)
	return u
}

// Gregorian epoch (1582-10-15) to Unix epoch, in 100 ns intervals.
const gregorianOffset = 0x01B21DD213814000

// timeUUIDTicks converts t to the 60-bit count of 100 ns intervals since 1582-10-15,
// clamped to what the field can hold (1582-10-15 to 5236-03-31).
func timeUUIDTicks(t time.Time) uint64 {
	// Split to avoid overflow: whole seconds and the sub-second part.
	sec := t.Unix()
	const minSec, maxSec = -gregorianOffset / 10_000_000, (1<<60-1-gregorianOffset)/10_000_000 - 1
	if sec < minSec {
		return 0
	}
	if sec > maxSec {
		return 1<<60 - 1
	}
	return uint64(sec*10_000_000+int64(t.Nanosecond()/100)) + gregorianOffset
}

func timeUUID(ticks uint64, clockSeqAndNode uint64) [16]byte {
	u := timeUUIDRaw(ticks, clockSeqAndNode)
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return u
}

// timeUUIDRaw sets the version but leaves the variant bits as given: Cassandra's own
// bounds (maxTimeuuid's 0x7f7f…) are not RFC-variant values.
func timeUUIDRaw(ticks uint64, clockSeqAndNode uint64) [16]byte {
	var u [16]byte
	binary.BigEndian.PutUint32(u[0:4], uint32(ticks))
	binary.BigEndian.PutUint16(u[4:6], uint16(ticks>>32))
	binary.BigEndian.PutUint16(u[6:8], uint16(ticks>>48)&0x0fff|0x1000)
	binary.BigEndian.PutUint64(u[8:16], clockSeqAndNode)
	return u
}

// NewTimeUUID returns a version 1 TimeUUID whose time is t (to 100 ns) with a random
// clock sequence and node (multicast bit set, as RFC 9562 asks of random nodes): 62
// random bits make it unique even among many ids for the same t. Use the event's own
// time, chosen once before the first attempt, never the time of the attempt.
// Times outside 1582-10-15 … 5236-03-31 are clamped.
func NewTimeUUID(t time.Time) [16]byte {
	csn := mrand.Uint64() | 1<<40 // multicast bit of the node's first byte
	return timeUUID(timeUUIDTicks(t), csn)
}

// TimeUUIDFromKey returns a version 1 TimeUUID whose time is t (to 100 ns) and whose
// clock sequence and node are derived from key (SHA-1): the same (t, key) always gives
// the same UUID, so a re-submitted request writes the same event row instead of a
// duplicate. Different keys at the same t differ with overwhelming probability (62 bits).
func TimeUUIDFromKey(t time.Time, key []byte) [16]byte {
	sum := sha1.Sum(key)
	csn := binary.BigEndian.Uint64(sum[:8]) | 1<<40
	return timeUUID(timeUUIDTicks(t), csn)
}

// MinTimeUUID returns the smallest TimeUUID, in Cassandra's timeuuid order, whose time is
// t's 100 ns tick: every TimeUUID at t or later sorts at or after it. CQL's
// minTimeuuid(ms) equals MinTimeUUID of that millisecond byte for byte.
func MinTimeUUID(t time.Time) [16]byte {
	return timeUUID(timeUUIDTicks(t), 0x8080808080808080)
}

// MaxTimeUUID returns the largest TimeUUID whose time is t's 100 ns tick: every TimeUUID
// at t or earlier sorts at or before it. Like Cassandra's own bound its clock sequence
// and node are 0x7f7f…, which is not an RFC 9562 variant: use it as a range bound, never
// as an id. CQL's maxTimeuuid(ms) covers the whole millisecond: it equals
// MaxTimeUUID(ms + 999.9 µs) byte for byte.
func MaxTimeUUID(t time.Time) [16]byte {
	return timeUUIDRaw(timeUUIDTicks(t), 0x7f7f7f7f7f7f7f7f)
}

// Compare orders two UUIDs the way Cassandra's timeuuid type orders them in a
// clustering column: by timestamp, then by the clock sequence and node compared as
// signed bytes. It returns -1, 0 or +1. For version 1 UUIDs only; others compare by
// the same rule, which is not their natural order.
func Compare(a, b [16]byte) int {
	ta, tb := reorderedMSB(a), reorderedMSB(b)
	if ta != tb {
		if ta < tb {
			return -1
		}
		return 1
	}
	for i := 8; i < 16; i++ {
		x, y := int8(a[i]), int8(b[i])
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// reorderedMSB puts version+time_hi, time_mid, time_low in significance order, as
// Cassandra's TimeUUIDType does before a signed comparison.
func reorderedMSB(u [16]byte) int64 {
	hi := uint64(binary.BigEndian.Uint16(u[6:8]))
	mid := uint64(binary.BigEndian.Uint16(u[4:6]))
	low := uint64(binary.BigEndian.Uint32(u[0:4]))
	return int64(hi<<48 | mid<<32 | low)
}
