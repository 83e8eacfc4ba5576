package outbox

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strconv"
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

type outboxValue struct {
	T string `json:"t"`
	V string `json:"v,omitempty"`
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

func encodeValue(v any) (outboxValue, error) {
	if v == any(gocql.UnsetValue) {
		return outboxValue{T: "unset"}, nil
	}
	switch x := v.(type) {
	case nil:
		return outboxValue{T: "null"}, nil
	case bool:
		if x {
			return outboxValue{T: "bool", V: "1"}, nil
		}
		return outboxValue{T: "bool", V: "0"}, nil
	case string:
		return outboxValue{T: "string", V: x}, nil
	case []byte:
		return outboxValue{T: "bytes", V: base64.StdEncoding.EncodeToString(x)}, nil
	case int:
		return outboxValue{T: "int", V: strconv.FormatInt(int64(x), 10)}, nil
	case int8:
		return outboxValue{T: "int8", V: strconv.FormatInt(int64(x), 10)}, nil
	case int16:
		return outboxValue{T: "int16", V: strconv.FormatInt(int64(x), 10)}, nil
	case int32:
		return outboxValue{T: "int32", V: strconv.FormatInt(int64(x), 10)}, nil
	case int64:
		return outboxValue{T: "int64", V: strconv.FormatInt(x, 10)}, nil
	case uint8:
		return outboxValue{T: "uint8", V: strconv.FormatUint(uint64(x), 10)}, nil
	case uint16:
		return outboxValue{T: "uint16", V: strconv.FormatUint(uint64(x), 10)}, nil
	case uint32:
		return outboxValue{T: "uint32", V: strconv.FormatUint(uint64(x), 10)}, nil
	case uint64:
		return outboxValue{T: "uint64", V: strconv.FormatUint(x, 10)}, nil
	case float32:
		return outboxValue{T: "float32", V: strconv.FormatUint(uint64(math.Float32bits(x)), 10)}, nil
	case float64:
		return outboxValue{T: "float64", V: strconv.FormatUint(math.Float64bits(x), 10)}, nil
	case time.Time:
		return outboxValue{T: "time", V: x.UTC().Format(time.RFC3339Nano)}, nil
	case time.Duration:
		return outboxValue{T: "duration", V: strconv.FormatInt(int64(x), 10)}, nil
	case gocql.UUID:
		return outboxValue{T: "uuid", V: x.String()}, nil
	}
	return outboxValue{}, fmt.Errorf("%w of type %T", ErrValue, v)
}

// decodeValue is strict: a value out of its type's range or with trailing text is an
// error, never silently wrapped or cut.
func decodeValue(v outboxValue) (any, error) {
	parseI := func(bits int) (int64, error) { return strconv.ParseInt(v.V, 10, bits) }
	parseU := func(bits int) (uint64, error) { return strconv.ParseUint(v.V, 10, bits) }
	var (
		i   int64
		u   uint64
		out any
		err error
	)
	switch v.T {
	case "null":
		return nil, nil
	case "unset":
		return gocql.UnsetValue, nil
	case "bool":
		if v.V != "0" && v.V != "1" {
			err = errors.New("not 0 or 1")
		}
		out = v.V == "1"
	case "string":
		out = v.V
	case "bytes":
		out, err = base64.StdEncoding.DecodeString(v.V)
	case "int":
		i, err = parseI(strconv.IntSize)
		out = int(i)
	case "int8":
		i, err = parseI(8)
		out = int8(i)
	case "int16":
		i, err = parseI(16)
		out = int16(i)
	case "int32":
		i, err = parseI(32)
		out = int32(i)
	case "int64":
		out, err = parseI(64)
	case "uint8":
		u, err = parseU(8)
		out = uint8(u)
	case "uint16":
		u, err = parseU(16)
		out = uint16(u)
	case "uint32":
		u, err = parseU(32)
		out = uint32(u)
	case "uint64":
		out, err = parseU(64)
	case "float32":
		u, err = parseU(32)
		out = math.Float32frombits(uint32(u))
	case "float64":
		u, err = parseU(64)
		out = math.Float64frombits(u)
	case "time":
		out, err = time.Parse(time.RFC3339Nano, v.V)
	case "duration":
		i, err = parseI(64)
		out = time.Duration(i)
	case "uuid":
		out, err = gocql.ParseUUID(v.V)
	default:
		return nil, fmt.Errorf("outbox: unknown value type %q", v.T)
	}
	if err != nil {
		return nil, fmt.Errorf("outbox: bad %s value %q: %w", v.T, v.V, err)
	}
	return out, nil
}
