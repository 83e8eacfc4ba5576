package value

import "encoding/binary"

// JoinTuple rebuilds a tuple's serialised form from its elements' (nil: a NULL
// element). Both drivers scan a tuple column into one destination per element, so a
// NULL tuple reads as one whose elements are all NULL: tell them apart by WRITETIME.
func JoinTuple(parts [][]byte) []byte {
	b := make([]byte, 0, 4*len(parts))
	for _, p := range parts {
		if p == nil {
			b = binary.BigEndian.AppendUint32(b, 0xffffffff) // -1: NULL element
			continue
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	return b
}

// UDTFields says which fields of a serialised UDT value hold a value (a field left out
// at the end, or NULL, holds none): TTL() and WRITETIME() of a non-frozen UDT list one
// entry per field, null for a field without a cell.
func UDTFields(b []byte) []bool {
	fields := []bool{}
	for len(b) >= 4 {
		l := int(int32(binary.BigEndian.Uint32(b)))
		b = b[4:]
		if l < 0 {
			fields = append(fields, false)
			continue
		}
		if l > len(b) {
			break
		}
		fields = append(fields, true)
		b = b[l:]
	}
	return fields
}
