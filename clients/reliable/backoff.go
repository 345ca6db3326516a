package reliable

import (
	"encoding/binary"
	"hash/fnv"
	"time"
)

// Backoff bounds: attempt 0 waits up to BackoffBase, each attempt doubles
// the ceiling, up to BackoffCap.
const (
	BackoffBase = 250 * time.Millisecond
	BackoffCap  = 8 * time.Second
)

// Ceiling is the upper bound of the delay before attempt (0-based):
// BackoffBase << attempt, capped at BackoffCap.
func Ceiling(attempt int) time.Duration {
	if attempt < 0 {
		attempt = 0
	}
	if attempt >= 16 {
		return BackoffCap
	}
	return min(BackoffBase<<attempt, BackoffCap)
}

// Backoff is the delay before attempt for the client named clientID: a
// "full jitter" draw in [0, Ceiling(attempt)) that is deterministic — the
// same (clientID, attempt) always gives the same delay, so a herd of
// clients spreads out and a run can be reproduced.
func Backoff(clientID string, attempt int) time.Duration {
	return time.Duration(float64(Ceiling(attempt)) * Jitter(clientID, attempt))
}

// Jitter is a deterministic fraction in [0, 1) drawn from (clientID,
// attempt) with FNV-1a.
func Jitter(clientID string, attempt int) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(clientID))
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(attempt))
	_, _ = h.Write(b[:])
	// Finalise (FNV's low bits mix poorly for close inputs).
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return float64(x>>11) / float64(1<<53)
}
