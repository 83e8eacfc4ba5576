package clientid

import (
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	core "github.com/cqlsafe/cqlsafe/internal/core/clientid"
)

// The UUID algorithms are cqlsafe's driver-neutral core, on [16]byte; these give them
// gocql's UUID type (the same 16 bytes: the conversion costs nothing).

// Namespaces for FromKey, from RFC 9562 Appendix A, and one of cqlsafe's own for
// idempotency keys that have no better namespace.
var (
	NamespaceDNS  = gocql.UUID{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	NamespaceURL  = gocql.UUID{0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	NamespaceOID  = gocql.UUID{0x6b, 0xa7, 0xb8, 0x12, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	NamespaceX500 = gocql.UUID{0x6b, 0xa7, 0xb8, 0x14, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	// NamespaceIdempotencyKey is FromKey(NamespaceURL, "https://cqlsafe.dev/ns/idempotency-key").
	NamespaceIdempotencyKey = FromKey(NamespaceURL, []byte("https://cqlsafe.dev/ns/idempotency-key"))
)

// NewRandom returns a random (version 4) UUID from crypto/rand.
func NewRandom() gocql.UUID { return core.NewRandom() }

// FromKey returns the name-based (version 5, SHA-1) UUID of key in namespace, RFC 9562
// section 5.5: the same namespace and key always give the same UUID, so an idempotency
// key maps to one id however often a request is re-submitted.
func FromKey(namespace gocql.UUID, key []byte) gocql.UUID { return core.FromKey(namespace, key) }

// NewV7 returns a time-ordered (version 7) UUID for the current time.
func NewV7() gocql.UUID { return core.NewV7() }

// NewV7At returns a version 7 UUID (RFC 9562 section 5.7) whose 48-bit Unix-millisecond
// prefix is t, followed by 74 random bits. Byte order is time order at millisecond
// precision; within a millisecond the order is random. Cassandra's uuid type compares
// UUIDs of the same (non-1) version as unsigned bytes, so v7 keys cluster by creation
// time. For a timeuuid column use NewTimeUUID instead: timeuuid accepts only version 1.
// Times before 1970 or after year 10889 are clamped.
func NewV7At(t time.Time) gocql.UUID { return core.NewV7At(t) }

// NewTimeUUID returns a version 1 TimeUUID whose time is t (to 100 ns) with a random
// clock sequence and node (multicast bit set, as RFC 9562 asks of random nodes): 62
// random bits make it unique even among many ids for the same t. Use the event's own
// time, chosen once before the first attempt, never the time of the attempt.
// Times outside 1582-10-15 … 5236-03-31 are clamped.
func NewTimeUUID(t time.Time) gocql.UUID { return core.NewTimeUUID(t) }

// TimeUUIDFromKey returns a version 1 TimeUUID whose time is t (to 100 ns) and whose
// clock sequence and node are derived from key (SHA-1): the same (t, key) always gives
// the same UUID, so a re-submitted request writes the same event row instead of a
// duplicate. Different keys at the same t differ with overwhelming probability (62 bits).
func TimeUUIDFromKey(t time.Time, key []byte) gocql.UUID { return core.TimeUUIDFromKey(t, key) }

// MinTimeUUID returns the smallest TimeUUID, in Cassandra's timeuuid order, whose time is
// t's 100 ns tick: every TimeUUID at t or later sorts at or after it. CQL's
// minTimeuuid(ms) equals MinTimeUUID of that millisecond byte for byte.
func MinTimeUUID(t time.Time) gocql.UUID { return core.MinTimeUUID(t) }

// MaxTimeUUID returns the largest TimeUUID whose time is t's 100 ns tick: every TimeUUID
// at t or earlier sorts at or before it. Like Cassandra's own bound its clock sequence
// and node are 0x7f7f…, which is not an RFC 9562 variant: use it as a range bound, never
// as an id. CQL's maxTimeuuid(ms) covers the whole millisecond: it equals
// MaxTimeUUID(ms + 999.9 µs) byte for byte.
func MaxTimeUUID(t time.Time) gocql.UUID { return core.MaxTimeUUID(t) }

// Compare orders two UUIDs the way Cassandra's timeuuid type orders them in a
// clustering column: by timestamp, then by the clock sequence and node compared as
// signed bytes. It returns -1, 0 or +1. For version 1 UUIDs only; others compare by
// the same rule, which is not their natural order.
func Compare(a, b gocql.UUID) int { return core.Compare(a, b) }
