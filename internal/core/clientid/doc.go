// Package clientid is the driver-neutral half of github.com/cqlsafe/cqlsafe/clientid:
// the write clock (one per process, whichever drivers the process links), time buckets,
// sortable keys and the UUID algorithms on [16]byte. Each driver's clientid package gives
// them its own UUID type.
package clientid
