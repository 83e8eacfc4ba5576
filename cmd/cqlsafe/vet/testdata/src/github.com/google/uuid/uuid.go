// Package uuid is a stub of github.com/google/uuid for the analyzer's tests.
package uuid

type UUID [16]byte

func New() UUID         { return UUID{} }
func NewString() string { return "" }
