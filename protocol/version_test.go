package protocol

import (
	"slices"
	"testing"
)

func TestVersionsAreInNegotiationOrder(t *testing.T) {
	vs := Versions()
	want := []Version{V20260728, V20251125, V20250618}
	if !slices.Equal(vs, want) {
		t.Fatalf("Versions() = %v, want %v", vs, want)
	}
	// Newest first, by the type's own order.
	if !slices.IsSortedFunc(vs, func(a, b Version) int { return Compare(b, a) }) {
		t.Fatalf("Versions() %v is not newest first", vs)
	}
	vs[0] = "mutated"
	if Versions()[0] != V20260728 {
		t.Fatal("Versions returned the package's own slice")
	}
}

func TestVersionOrder(t *testing.T) {
	tests := []struct {
		a, b Version
		want int
	}{
		{V20250618, V20251125, -1},
		{V20251125, V20260728, -1},
		{V20260728, V20250618, 1},
		{V20251125, V20251125, 0},
		{"2024-11-05", V20250618, -1}, // an older, unknown revision
		{"2027-01-01", V20260728, 1},  // a later, unknown revision
		{"", V20250618, -1},           // not a date: before every version
		{"garbage", "2024-11-05", -1},
		{"garbage", "", 0},
		{"2026-13-01", "2025-01-01", -1}, // not a real date
	}
	for _, tt := range tests {
		if got := Compare(tt.a, tt.b); got != tt.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Compare(tt.b, tt.a); got != -tt.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
		if tt.a.Before(tt.b) != (tt.want < 0) || tt.a.Newer(tt.b) != (tt.want > 0) {
			t.Errorf("%q.Before/Newer(%q) disagree with Compare = %d", tt.a, tt.b, tt.want)
		}
	}
}

func TestEra(t *testing.T) {
	tests := []struct {
		v    Version
		want Era
	}{
		{V20250618, EraLegacy},
		{V20251125, EraLegacy},
		{V20260728, EraModern},
		{"2027-01-01", EraModern},
		{"2024-11-05", EraLegacy},
		{"", EraLegacy},
	}
	for _, tt := range tests {
		if got := tt.v.Era(); got != tt.want {
			t.Errorf("%q.Era() = %q, want %q", tt.v, got, tt.want)
		}
	}
	if got := EraLegacy.Versions(); !slices.Equal(got, []Version{V20251125, V20250618}) {
		t.Errorf("EraLegacy.Versions() = %v", got)
	}
	if got := EraModern.Versions(); !slices.Equal(got, []Version{V20260728}) {
		t.Errorf("EraModern.Versions() = %v", got)
	}
	if FirstModern.Era() != EraModern || slices.ContainsFunc(EraModern.Versions(), func(v Version) bool { return v.Before(FirstModern) }) {
		t.Error("FirstModern is not the oldest modern version")
	}
}

func TestKnown(t *testing.T) {
	for _, v := range Versions() {
		if !v.Known() {
			t.Errorf("%q not Known", v)
		}
	}
	for _, v := range []Version{"2024-11-05", "2027-01-01", ""} {
		if v.Known() {
			t.Errorf("%q Known", v)
		}
	}
}
