package suites

import (
	"math"
	"testing"
)

func TestEstimateBits(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ids      []string
		bits     float64
		alphabet string
	}{
		{"counter", []string{"session-1", "session-2", "session-3", "session-4"}, math.Log2(10), "digits"},
		{"128-bit hex", []string{"bfbb0c755f223e61322c059efdb36a85", "df47e17a953347f732b70f559a55e1f3", "10d52d0d4255b243a7ade8da8997ae7f"}, 32 * 4, "hex"},
		{"uuid v4", []string{"937151b0-9adf-4db8-b285-f6ebb29ceec4", "37f7f451-72c0-4450-a414-1337c60deffc", "2cdb272b-3d99-4334-a8a8-5414b8817cc0"}, 31 * 4, "hex"},
		{"base32", []string{"YQNAQS3NQS47466VVC4OQ2OHGJ", "ZV5NLDIJZBAJPYC5JMIVJWFRFW", "TBYVMGAG6K6C5RT3O3IOWLSNSG"}, 26 * 5, "base32"},
		{"clock", []string{"s-1764412345001", "s-1764412345117", "s-1764412345230"}, 3 * math.Log2(10), "digits"},
		{"one sample", []string{"abc"}, 0, "digits"},
		{"odd characters", []string{"a!b", "c#d"}, 3 * math.Log2(94), "visible ASCII"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bits, alphabet := estimateBits(tc.ids)
			if math.Abs(bits-tc.bits) > 1e-9 || alphabet != tc.alphabet {
				t.Errorf("estimateBits = %.2f %s, want %.2f %s", bits, alphabet, tc.bits, tc.alphabet)
			}
		})
	}
}
