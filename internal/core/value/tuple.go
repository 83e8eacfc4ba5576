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
