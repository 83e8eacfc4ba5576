package faultproxy

import (
	"encoding/binary"
	"fmt"
)

// CQL error codes the proxy can answer with (native protocol v4, section 9).
const (
	CodeUnavailable     = 0x1000
	CodeOverloaded      = 0x1001
	CodeIsBootstrapping = 0x1002
	CodeWriteTimeout    = 0x1100
	CodeReadTimeout     = 0x1200
	CodeWriteFailure    = 0x1500
	CodeCASWriteUnknown = 0x1700
)

// Consistency levels, as the protocol numbers them.
const (
	One         uint16 = 0x0001
	Quorum      uint16 = 0x0004
	LocalQuorum uint16 = 0x0006
	Serial      uint16 = 0x0008
	LocalSerial uint16 = 0x0009
)

// ErrorFrame is an ERROR response the proxy sends in Cassandra's place. Build it with
// Unavailable, Overloaded, IsBootstrapping or WriteTimeout.
type ErrorFrame struct {
	Code        int32
	Message     string
	Consistency uint16
	Received    int32  // WRITE_TIMEOUT, WRITE_FAILURE, CAS_WRITE_UNKNOWN: replicas that acknowledged
	BlockFor    int32  // … and that were needed; UNAVAILABLE: required
	Alive       int32  // UNAVAILABLE: replicas alive
	WriteType   string // WRITE_TIMEOUT, WRITE_FAILURE: SIMPLE, BATCH, BATCH_LOG, UNLOGGED_BATCH, COUNTER, CAS, VIEW, CDC
}

// Unavailable: not enough replicas alive for the consistency level; nothing was written.
func Unavailable() ErrorFrame {
	return ErrorFrame{Code: CodeUnavailable, Message: "Cannot achieve consistency level QUORUM (faultproxy)", Consistency: Quorum, BlockFor: 2, Alive: 1}
}

// UnavailableAt is Unavailable at consistency c: a conditional write's Paxos round
// raises it at SERIAL or LOCAL_SERIAL before it begins, at the commit consistency after
// the proposal was accepted (legacy Paxos's commitPaxos).
func UnavailableAt(c uint16) ErrorFrame {
	e := Unavailable()
	e.Consistency = c
	e.Message = fmt.Sprintf("Cannot achieve consistency level %#x (faultproxy)", c)
	return e
}

// Overloaded: the coordinator refused the request.
func Overloaded() ErrorFrame {
	return ErrorFrame{Code: CodeOverloaded, Message: "Server is overloaded (faultproxy)"}
}

// IsBootstrapping: the coordinator is still joining the ring.
func IsBootstrapping() ErrorFrame {
	return ErrorFrame{Code: CodeIsBootstrapping, Message: "Cannot read from a bootstrapping node (faultproxy)"}
}

// WriteTimeout: replicas did not acknowledge in time; writeType says what was being
// written (BATCH_LOG: the batch log write timed out, nothing applied; BATCH: the batch
// is in the batch log and will be applied; SIMPLE, UNLOGGED_BATCH, COUNTER, CAS, …).
func WriteTimeout(writeType string) ErrorFrame {
	return ErrorFrame{Code: CodeWriteTimeout, Message: "Operation timed out - received only 0 responses (faultproxy)",
		Consistency: Quorum, Received: 0, BlockFor: 2, WriteType: writeType}
}

// encode renders the frame as a response with the request's stream. version is the
// response's version byte (the request's with the direction bit set).
func (e ErrorFrame) encode(version byte, stream int16) []byte {
	body := binary.BigEndian.AppendUint32(nil, uint32(e.Code))
	body = appendString(body, e.Message)
	switch e.Code {
	case CodeUnavailable:
		body = binary.BigEndian.AppendUint16(body, e.Consistency)
		body = binary.BigEndian.AppendUint32(body, uint32(e.BlockFor))
		body = binary.BigEndian.AppendUint32(body, uint32(e.Alive))
	case CodeWriteTimeout:
		body = binary.BigEndian.AppendUint16(body, e.Consistency)
		body = binary.BigEndian.AppendUint32(body, uint32(e.Received))
		body = binary.BigEndian.AppendUint32(body, uint32(e.BlockFor))
		body = appendString(body, e.WriteType)
	case CodeWriteFailure:
		body = binary.BigEndian.AppendUint16(body, e.Consistency)
		body = binary.BigEndian.AppendUint32(body, uint32(e.Received))
		body = binary.BigEndian.AppendUint32(body, uint32(e.BlockFor))
		body = binary.BigEndian.AppendUint32(body, 1) // failures
		body = appendString(body, e.WriteType)
	case CodeCASWriteUnknown:
		body = binary.BigEndian.AppendUint16(body, e.Consistency)
		body = binary.BigEndian.AppendUint32(body, uint32(e.Received))
		body = binary.BigEndian.AppendUint32(body, uint32(e.BlockFor))
	case CodeReadTimeout:
		body = binary.BigEndian.AppendUint16(body, e.Consistency)
		body = binary.BigEndian.AppendUint32(body, uint32(e.Received))
		body = binary.BigEndian.AppendUint32(body, uint32(e.BlockFor))
		body = append(body, 0) // data present
	}
	frame := []byte{version | 0x80, 0, byte(uint16(stream) >> 8), byte(stream), OpError}
	frame = binary.BigEndian.AppendUint32(frame, uint32(len(body)))
	return append(frame, body...)
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}
