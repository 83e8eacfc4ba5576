package outbox

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/engine"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	recordHeader = 8 // payload length, CRC-32C of the payload (big-endian uint32 each)
	maxRecord    = 64 << 20
)

type Record struct {
	Batch bool `json:"batch,omitempty"`
	// Type is the batch type: "logged", "unlogged" or "counter"; empty for a single
	// statement and in records written before it was stored (replayed LOGGED).
	Type      string `json:"type,omitempty"`
	Timestamp int64  `json:"ts"`
	// Consistency is the write's consistency level by name; empty in records written
	// before it was stored (replayed at the session's default).
	Consistency string    `json:"cl,omitempty"`
	Statements  []Stmt    `json:"stmts"`
	Recorded    time.Time `json:"recorded"`
	Err         string    `json:"err,omitempty"`
}

type Stmt struct {
	CQL    string  `json:"cql"`
	Values []Value `json:"values,omitempty"`
}

// Value is one bound value: its type T and text V (see value.go); a list, set,
// tuple or vector holds its elements in L, a map its keys in K and values in L.
type Value struct {
	T string  `json:"t"`
	V string  `json:"v,omitempty"`
	K []Value `json:"k,omitempty"`
	L []Value `json:"l,omitempty"`
}

// RawRecord is one framed record as found in the file.
type RawRecord struct {
	payload []byte
	offset  int64 // of its frame, when read from a file
}

// Payload is the record's JSON.
func (r RawRecord) Payload() []byte { return r.payload }

func (r RawRecord) size() int64 { return recordHeader + int64(len(r.payload)) }

func Frame(payload []byte) []byte {
	buf := make([]byte, recordHeader, recordHeader+len(payload))
	binary.BigEndian.PutUint32(buf[0:4], uint32(len(payload)))
	binary.BigEndian.PutUint32(buf[4:8], crc32.Checksum(payload, castagnoli))
	return append(buf, payload...)
}

// EncodeRecord checks e is safe to replay and converts it to its stored form.
func (d *Driver[B]) EncodeRecord(e *engine.OutcomeUnknownError[B]) (Record, error) {
	if !e.Idempotent {
		return Record{}, fmt.Errorf("%w: outbox refuses it", engine.ErrNotIdempotent)
	}
	if err := d.Replayable(e, e.BatchType); err != nil {
		return Record{}, err
	}
	rec := Record{Batch: e.Batch, Timestamp: e.Timestamp, Consistency: e.Consistency, Recorded: time.Now().UTC()}
	if e.Batch {
		rec.Type = d.BatchTypes[e.BatchType] // zero value LoggedBatch: the safe type when unset
	}
	if e.Err != nil {
		rec.Err = e.Err.Error()
	}
	for _, s := range e.Statements {
		st := Stmt{CQL: s.CQL}
		for _, v := range s.Values {
			ev, err := d.EncodeValue(v)
			if err != nil {
				return Record{}, err
			}
			st.Values = append(st.Values, ev)
		}
		rec.Statements = append(rec.Statements, st)
	}
	return rec, nil
}

// Driver is what the outbox needs of a driver: its batch types (named "logged",
// "unlogged", "counter" in records; the zero B is a logged batch in both drivers) and its
// value types.
type Driver[B comparable] struct {
	Values
	BatchTypes                map[B]string
	Logged, Unlogged, Counter B
	// Rejected reports an error of a replayed write that the record itself causes and a
	// retry cannot mend: Cassandra refused the statement (invalid, syntax, unauthorized,
	// configuration) or a value would not marshal. Replay goes on past such a record.
	Rejected func(err error) bool
}

// DecodeRecord parses a stored record back into the write it describes and its batch
// type (LoggedBatch when not recorded).
func (d *Driver[B]) DecodeRecord(payload []byte) (*engine.OutcomeUnknownError[B], B, error) {
	var r Record
	if err := json.Unmarshal(payload, &r); err != nil {
		return nil, d.Logged, fmt.Errorf("outbox: bad record: %w", err)
	}
	typ := d.Logged
	switch r.Type {
	case "", "logged":
	case "unlogged":
		typ = d.Unlogged
	case "counter":
		typ = d.Counter
	default:
		return nil, d.Logged, fmt.Errorf("outbox: unknown batch type %q", r.Type)
	}
	e := &engine.OutcomeUnknownError[B]{Batch: r.Batch, Timestamp: r.Timestamp, Idempotent: true, Consistency: r.Consistency}
	if r.Batch {
		e.BatchType = typ
	}
	if r.Err != "" {
		e.Err = errors.New(r.Err)
	}
	for _, s := range r.Statements {
		st := engine.Statement{CQL: s.CQL}
		for _, v := range s.Values {
			dv, err := d.DecodeValue(v)
			if err != nil {
				return nil, d.Logged, err
			}
			st.Values = append(st.Values, dv)
		}
		e.Statements = append(e.Statements, st)
	}
	return e, typ, nil
}

// ScanRecords reads the framed records of r from offset from to size. It returns them
// with the offset just past the last intact one, and whether what follows it (if
// anything) is a torn tail (TornTail) rather than damage. It reads only the framing and
// checksums; payloads are decoded by DecodeRecord.
func ScanRecords(r io.ReaderAt, from, size int64) (recs []RawRecord, good int64, torn bool, err error) {
	if from < 0 || from > size {
		return nil, 0, false, fmt.Errorf("outbox: scan from %d of %d bytes", from, size)
	}
	br := bufio.NewReader(io.NewSectionReader(r, from, size-from))
	good = from
	var hdr [recordHeader]byte
	for size-good >= recordHeader {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return nil, 0, false, err
		}
		n := int64(binary.BigEndian.Uint32(hdr[0:4]))
		if n == 0 || n > maxRecord || recordHeader+n > size-good {
			break
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(br, payload); err != nil {
			return nil, 0, false, err
		}
		if crc32.Checksum(payload, castagnoli) != binary.BigEndian.Uint32(hdr[4:8]) {
			break
		}
		recs = append(recs, RawRecord{payload: payload, offset: good})
		good += recordHeader + n
	}
	if good == size {
		return recs, good, true, nil
	}
	torn, err = tornAt(r, good, size)
	if err != nil {
		return nil, 0, false, err
	}
	return recs, good, torn, nil
}

// tornAt judges the bytes of r from off to size, which hold no intact record at off.
func tornAt(r io.ReaderAt, off, size int64) (bool, error) {
	if size-off > recordHeader+maxRecord+zeroSlack {
		// More than one append could leave: a torn tail only if zero-filled.
		return zerosAt(r, off, size)
	}
	b := make([]byte, size-off)
	if _, err := r.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	return TornTail(b), nil
}

// zeroSlack: how far past a cut append zero-filled blocks may reach.
const zeroSlack = 1 << 20

func zerosAt(r io.ReaderAt, off, size int64) (bool, error) {
	buf := make([]byte, 32<<10)
	for off < size {
		n, err := r.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if !isZero(buf[:n]) {
			return false, nil
		}
		off += int64(n)
		if err != nil && !errors.Is(err, io.EOF) {
			return false, err
		}
		if n == 0 {
			break
		}
	}
	return true, nil
}

// TornTail reports whether b, the end of an outbox file past its last intact record,
// is what a crash in the middle of one append leaves — which Open cuts — rather than
// damage to acknowledged records, which it must not cut. An append is one write of one
// frame, fsynced before it is acknowledged, and frames follow each other, so a crash
// leaves a prefix of the last frame, or zeros where its blocks had not reached the disk
// (a power loss). Torn:
//   - fewer bytes than a frame header;
//   - zeros at the end — a payload is JSON and ends in '}', never in a zero byte;
//   - a plausible length that runs past the end of the file, when the bytes there are
//     not a whole record under a damaged length (their checksum does not match).
//
// Never torn: an intact frame anywhere in b (damage with acknowledged data after it),
// a length that is zero or over the limit, a whole frame whose checksum fails (a flipped
// bit in the last record).
func TornTail(b []byte) bool {
	if len(b) < recordHeader {
		return true
	}
	if frameIn(b, 1) {
		return false
	}
	if b[len(b)-1] == 0 {
		return true
	}
	n := int64(binary.BigEndian.Uint32(b[0:4]))
	if n == 0 || n > maxRecord || recordHeader+n <= int64(len(b)) {
		return false
	}
	return crc32.Checksum(b[recordHeader:], castagnoli) != binary.BigEndian.Uint32(b[4:8])
}

// frameIn reports whether an intact frame starts in b at or after from. Checksums over
// at most frameSearchBudget bytes are computed in all (crafted input could otherwise
// make the search quadratic); past it, it answers true — damage, never cut — which is
// the safe answer.
func frameIn(b []byte, from int) bool {
	budget := int64(frameSearchBudget)
	size := int64(len(b))
	for p := int64(from); p+recordHeader < size; p++ {
		n := int64(binary.BigEndian.Uint32(b[p : p+4]))
		if n == 0 || n > maxRecord || n > size-p-recordHeader || b[p+recordHeader] != '{' {
			continue
		}
		if budget -= n; budget < 0 {
			return true
		}
		if crc32.Checksum(b[p+recordHeader:p+recordHeader+n], castagnoli) == binary.BigEndian.Uint32(b[p+4:p+8]) {
			return true
		}
	}
	return false
}

// frameSearchBudget bounds frameIn's checksum work (bytes).
const frameSearchBudget = 256 << 20

func isZero(b []byte) bool { return len(bytes.Trim(b, "\x00")) == 0 }
