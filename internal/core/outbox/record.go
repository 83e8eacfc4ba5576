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
	Type       string    `json:"type,omitempty"`
	Timestamp  int64     `json:"ts"`
	Statements []Stmt    `json:"stmts"`
	Recorded   time.Time `json:"recorded"`
	Err        string    `json:"err,omitempty"`
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
type RawRecord struct{ payload []byte }

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
	rec := Record{Batch: e.Batch, Timestamp: e.Timestamp, Recorded: time.Now().UTC()}
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
	e := &engine.OutcomeUnknownError[B]{Batch: r.Batch, Timestamp: r.Timestamp, Idempotent: true}
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

// ScanRecords reads the framed records of r, which holds size bytes. It returns them
// with the offset just past the last intact one, and whether what follows it (if
// anything) looks like a torn tail — a record cut short or zero-filled by a crash in
// the middle of an append — rather than damage followed by intact data.
// It reads only the framing and checksums; payloads are decoded by DecodeRecord.
func ScanRecords(r io.Reader, size int64) (recs []RawRecord, good int64, torn bool, err error) {
	br := bufio.NewReader(r)
	var hdr [recordHeader]byte
	for {
		rest := size - good
		if rest == 0 {
			return recs, good, true, nil
		}
		if rest < recordHeader {
			return recs, good, true, nil
		}
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return nil, 0, false, err
		}
		n := int64(binary.BigEndian.Uint32(hdr[0:4]))
		if n > maxRecord {
			return recs, good, false, nil // Append never writes one: damage, not a torn append
		}
		if recordHeader+n > rest {
			return recs, good, true, nil // an append cut short
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(br, payload); err != nil {
			return nil, 0, false, err
		}
		if crc32.Checksum(payload, castagnoli) != binary.BigEndian.Uint32(hdr[4:8]) || n == 0 {
			// The last record in the file, or zeros to the end: a torn append.
			torn := recordHeader+n == rest || (isZero(hdr[:]) && isZero(payload) && restZero(br))
			return recs, good, torn, nil
		}
		recs = append(recs, RawRecord{payload: payload})
		good += recordHeader + n
	}
}

func isZero(b []byte) bool { return len(bytes.Trim(b, "\x00")) == 0 }

func restZero(r io.Reader) bool {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if !isZero(buf[:n]) {
			return false
		}
		if err != nil {
			return errors.Is(err, io.EOF)
		}
	}
}
