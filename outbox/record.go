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

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/retry"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	recordHeader = 8 // payload length, CRC-32C of the payload (big-endian uint32 each)
	maxRecord    = 64 << 20
)

type outboxRecord struct {
	Batch bool `json:"batch,omitempty"`
	// Type is the batch type: "logged", "unlogged" or "counter"; empty for a single
	// statement and in records written before it was stored (replayed LOGGED).
	Type       string       `json:"type,omitempty"`
	Timestamp  int64        `json:"ts"`
	Statements []outboxStmt `json:"stmts"`
	Recorded   time.Time    `json:"recorded"`
	Err        string       `json:"err,omitempty"`
}

type outboxStmt struct {
	CQL    string        `json:"cql"`
	Values []outboxValue `json:"values,omitempty"`
}

// outboxValue is one bound value: its type T and text V (see value.go); a list, set,
// tuple or vector holds its elements in L, a map its keys in K and values in L.
type outboxValue struct {
	T string        `json:"t"`
	V string        `json:"v,omitempty"`
	K []outboxValue `json:"k,omitempty"`
	L []outboxValue `json:"l,omitempty"`
}

// rawRecord is one framed record as found in the file.
type rawRecord struct{ payload []byte }

func (r rawRecord) size() int64 { return recordHeader + int64(len(r.payload)) }

func frame(payload []byte) []byte {
	buf := make([]byte, recordHeader, recordHeader+len(payload))
	binary.BigEndian.PutUint32(buf[0:4], uint32(len(payload)))
	binary.BigEndian.PutUint32(buf[4:8], crc32.Checksum(payload, castagnoli))
	return append(buf, payload...)
}

// encodeRecord checks e is safe to replay and converts it to its stored form.
func encodeRecord(e *retry.OutcomeUnknownError) (outboxRecord, error) {
	if !e.Idempotent {
		return outboxRecord{}, fmt.Errorf("%w: outbox refuses it", retry.ErrNotIdempotent)
	}
	if err := replayable(e, e.BatchType); err != nil {
		return outboxRecord{}, err
	}
	rec := outboxRecord{Batch: e.Batch, Timestamp: e.Timestamp, Recorded: time.Now().UTC()}
	if e.Batch {
		rec.Type = batchTypeName[e.BatchType] // zero value LoggedBatch: the safe type when unset
	}
	if e.Err != nil {
		rec.Err = e.Err.Error()
	}
	for _, s := range e.Statements {
		st := outboxStmt{CQL: s.CQL}
		for _, v := range s.Values {
			ev, err := encodeValue(v)
			if err != nil {
				return outboxRecord{}, err
			}
			st.Values = append(st.Values, ev)
		}
		rec.Statements = append(rec.Statements, st)
	}
	return rec, nil
}

var batchTypeName = map[gocql.BatchType]string{
	gocql.LoggedBatch:   "logged",
	gocql.UnloggedBatch: "unlogged",
	gocql.CounterBatch:  "counter",
}

// decodeRecord parses a stored record back into the write it describes and its batch
// type (LoggedBatch when not recorded).
func decodeRecord(payload []byte) (*retry.OutcomeUnknownError, gocql.BatchType, error) {
	var r outboxRecord
	if err := json.Unmarshal(payload, &r); err != nil {
		return nil, 0, fmt.Errorf("outbox: bad record: %w", err)
	}
	typ := gocql.LoggedBatch
	switch r.Type {
	case "", "logged":
	case "unlogged":
		typ = gocql.UnloggedBatch
	case "counter":
		typ = gocql.CounterBatch
	default:
		return nil, 0, fmt.Errorf("outbox: unknown batch type %q", r.Type)
	}
	e := &retry.OutcomeUnknownError{Batch: r.Batch, Timestamp: r.Timestamp, Idempotent: true}
	if r.Batch {
		e.BatchType = typ
	}
	if r.Err != "" {
		e.Err = errors.New(r.Err)
	}
	for _, s := range r.Statements {
		st := retry.Statement{CQL: s.CQL}
		for _, v := range s.Values {
			dv, err := decodeValue(v)
			if err != nil {
				return nil, 0, err
			}
			st.Values = append(st.Values, dv)
		}
		e.Statements = append(e.Statements, st)
	}
	return e, typ, nil
}

// scanRecords reads the framed records of r, which holds size bytes. It returns them
// with the offset just past the last intact one, and whether what follows it (if
// anything) looks like a torn tail — a record cut short or zero-filled by a crash in
// the middle of an append — rather than damage followed by intact data.
// It reads only the framing and checksums; payloads are decoded by decodeRecord.
func scanRecords(r io.Reader, size int64) (recs []rawRecord, good int64, torn bool, err error) {
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
		recs = append(recs, rawRecord{payload: payload})
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
