package reports

import (
	"crypto/rand"
	"encoding/binary"
)

// MaxSeed is the largest --seed: 2^53-1, the largest integer every JSON
// reader (JavaScript's numbers included) keeps exactly.
const MaxSeed = 1<<53 - 1

// NewSeed chooses a run's seed when none was given: random, in
// [1, MaxSeed].
func NewSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])%MaxSeed + 1
}
