package retry

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"github.com/gocql/gocql"
)

// ErrOutboxValue is returned by Outbox.Append for a bound value it cannot store.
var ErrOutboxValue = errors.New("retry: outbox cannot store value")

// Outbox is a local, append-only file of idempotent writes whose outcome stayed unknown,
// kept to be replayed later with their original timestamps. Because each write is
// idempotent and re-sent with the timestamp it was first pinned to, replaying it any
// number of times has the effect of applying it once, and it never overwrites a newer
// write.
//
// Each record is length-prefixed and CRC-32C checked, and Append fsyncs before it
// returns. A crash in the middle of an append leaves a torn tail, which Open detects
// and cuts off: records appended before it are intact.
//
// Stored values: nil, gocql.UnsetValue, bool, string, []byte, all int and uint sizes,
// float32/64, time.Time, time.Duration and gocql.UUID. Anything else is refused.
type Outbox struct {
	mu   sync.Mutex
	path string
	f    *os.File
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type outboxRecord struct {
	Batch      bool         `json:"batch,omitempty"`
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

// OpenOutbox opens (creating) the outbox file at path and cuts off a torn tail.
func OpenOutbox(path string) (*Outbox, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("retry: open outbox: %w", err)
	}
	_, good, err := readRecords(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("retry: outbox: cut torn tail: %w", err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return &Outbox{path: path, f: f}, nil
}

// Close closes the file.
func (o *Outbox) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.f == nil {
		return nil
	}
	err := o.f.Close()
	o.f = nil
	return err
}

// Append durably records a write whose outcome is unknown. Non-idempotent writes are
// refused (ErrNotIdempotent): replaying them could apply them twice.
func (o *Outbox) Append(e *OutcomeUnknownError) error {
	if e == nil {
		return errors.New("retry: outbox: nil record")
	}
	if !e.Idempotent {
		return fmt.Errorf("%w: outbox refuses it", ErrNotIdempotent)
	}
	rec := outboxRecord{Batch: e.Batch, Timestamp: e.Timestamp, Recorded: time.Now().UTC()}
	if e.Err != nil {
		rec.Err = e.Err.Error()
	}
	for _, s := range e.Statements {
		os := outboxStmt{CQL: s.CQL}
		for _, v := range s.Values {
			ev, err := encodeValue(v)
			if err != nil {
				return err
			}
			os.Values = append(os.Values, ev)
		}
		rec.Statements = append(rec.Statements, os)
	}
	payload, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("retry: outbox: %w", err)
	}
	buf := make([]byte, 8, 8+len(payload))
	binary.BigEndian.PutUint32(buf[0:4], uint32(len(payload)))
	binary.BigEndian.PutUint32(buf[4:8], crc32.Checksum(payload, castagnoli))
	buf = append(buf, payload...)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.f == nil {
		return errors.New("retry: outbox is closed")
	}
	if _, err := o.f.Write(buf); err != nil {
		return fmt.Errorf("retry: outbox append: %w", err)
	}
	if err := o.f.Sync(); err != nil {
		return fmt.Errorf("retry: outbox fsync: %w", err)
	}
	return nil
}

// Pending returns the recorded writes, oldest first.
func (o *Outbox) Pending() ([]*OutcomeUnknownError, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.f == nil {
		return nil, errors.New("retry: outbox is closed")
	}
	recs, _, err := readRecords(o.f)
	if err != nil {
		return nil, err
	}
	out := make([]*OutcomeUnknownError, 0, len(recs))
	for _, r := range recs {
		e := &OutcomeUnknownError{Batch: r.Batch, Timestamp: r.Timestamp, Idempotent: true}
		if r.Err != "" {
			e.Err = errors.New(r.Err)
		}
		for _, s := range r.Statements {
			st := Statement{CQL: s.CQL}
			for _, v := range s.Values {
				dv, err := decodeValue(v)
				if err != nil {
					return nil, err
				}
				st.Values = append(st.Values, dv)
			}
			e.Statements = append(e.Statements, st)
		}
		out = append(out, e)
	}
	return out, nil
}

// Replay re-applies every recorded write with its original timestamp, through p's
// retries, and empties the outbox when all succeeded. It returns how many were applied.
// On the first failure it stops and keeps the outbox as it is: a later Replay re-sends
// everything, which is harmless (same statements, same timestamps).
func (o *Outbox) Replay(ctx context.Context, s *gocql.Session, p *Policy) (int, error) {
	if p == nil {
		p = NewPolicy()
	}
	pending, err := o.Pending()
	if err != nil {
		return 0, err
	}
	for i, e := range pending {
		if e.Batch {
			b := s.NewBatch(gocql.UnloggedBatch)
			for _, st := range e.Statements {
				b.Query(st.CQL, st.Values...)
			}
			pb := p.PinBatch(ctx, b, e.Timestamp)
			err = s.ExecuteBatch(pb.Batch)
		} else if len(e.Statements) == 1 {
			pq := p.Pin(ctx, s.Query(e.Statements[0].CQL, e.Statements[0].Values...), e.Timestamp)
			err = pq.Query.Exec()
		}
		if err != nil {
			return i, fmt.Errorf("retry: outbox replay %d of %d: %w", i+1, len(pending), err)
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.f.Truncate(0); err != nil {
		return len(pending), err
	}
	if _, err := o.f.Seek(0, io.SeekStart); err != nil {
		return len(pending), err
	}
	return len(pending), o.f.Sync()
}

// readRecords reads records from the start of f and returns them with the offset just
// past the last intact one.
func readRecords(f *os.File) ([]outboxRecord, int64, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, 0, err
	}
	r := bufio.NewReader(f)
	var recs []outboxRecord
	var good int64
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			break // EOF or torn header
		}
		n := binary.BigEndian.Uint32(hdr[0:4])
		if n > 64<<20 {
			break
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			break
		}
		if crc32.Checksum(payload, castagnoli) != binary.BigEndian.Uint32(hdr[4:8]) {
			break
		}
		var rec outboxRecord
		if err := json.Unmarshal(payload, &rec); err != nil {
			break
		}
		recs = append(recs, rec)
		good += int64(8 + n)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		return nil, 0, err
	}
	return recs, good, nil
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
		return outboxValue{T: "int", V: fmt.Sprint(x)}, nil
	case int8:
		return outboxValue{T: "int8", V: fmt.Sprint(x)}, nil
	case int16:
		return outboxValue{T: "int16", V: fmt.Sprint(x)}, nil
	case int32:
		return outboxValue{T: "int32", V: fmt.Sprint(x)}, nil
	case int64:
		return outboxValue{T: "int64", V: fmt.Sprint(x)}, nil
	case uint8:
		return outboxValue{T: "uint8", V: fmt.Sprint(x)}, nil
	case uint16:
		return outboxValue{T: "uint16", V: fmt.Sprint(x)}, nil
	case uint32:
		return outboxValue{T: "uint32", V: fmt.Sprint(x)}, nil
	case uint64:
		return outboxValue{T: "uint64", V: fmt.Sprint(x)}, nil
	case float32:
		return outboxValue{T: "float32", V: fmt.Sprint(math.Float32bits(x))}, nil
	case float64:
		return outboxValue{T: "float64", V: fmt.Sprint(math.Float64bits(x))}, nil
	case time.Time:
		return outboxValue{T: "time", V: x.UTC().Format(time.RFC3339Nano)}, nil
	case time.Duration:
		return outboxValue{T: "duration", V: fmt.Sprint(int64(x))}, nil
	case gocql.UUID:
		return outboxValue{T: "uuid", V: x.String()}, nil
	}
	return outboxValue{}, fmt.Errorf("%w of type %T", ErrOutboxValue, v)
}

func decodeValue(v outboxValue) (any, error) {
	var i int64
	var u uint64
	parseI := func() error { _, err := fmt.Sscan(v.V, &i); return err }
	parseU := func() error { _, err := fmt.Sscan(v.V, &u); return err }
	var err error
	switch v.T {
	case "null":
		return nil, nil
	case "unset":
		return gocql.UnsetValue, nil
	case "bool":
		return v.V == "1", nil
	case "string":
		return v.V, nil
	case "bytes":
		return base64.StdEncoding.DecodeString(v.V)
	case "int":
		err = parseI()
		return int(i), err
	case "int8":
		err = parseI()
		return int8(i), err
	case "int16":
		err = parseI()
		return int16(i), err
	case "int32":
		err = parseI()
		return int32(i), err
	case "int64":
		err = parseI()
		return i, err
	case "uint8":
		err = parseU()
		return uint8(u), err
	case "uint16":
		err = parseU()
		return uint16(u), err
	case "uint32":
		err = parseU()
		return uint32(u), err
	case "uint64":
		err = parseU()
		return u, err
	case "float32":
		err = parseU()
		return math.Float32frombits(uint32(u)), err
	case "float64":
		err = parseU()
		return math.Float64frombits(u), err
	case "time":
		return time.Parse(time.RFC3339Nano, v.V)
	case "duration":
		err = parseI()
		return time.Duration(i), err
	case "uuid":
		return gocql.ParseUUID(v.V)
	}
	return nil, fmt.Errorf("retry: outbox: unknown value type %q", v.T)
}
