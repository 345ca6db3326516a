package httpheader

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in          string
		name, value string
		err         string
	}{
		{"Authorization: Bearer abc", "Authorization", "Bearer abc", ""},
		{"x-api-key:k", "X-Api-Key", "k", ""},
		{"  X-Empty:  ", "X-Empty", "", ""},
		{"X-Colon: a:b:c", "X-Colon", "a:b:c", ""},
		{"NoColon", "", "", "want 'Name: value'"},
		{": value", "", "", "empty name"},
		{"Bad Name: v", "", "", "not a valid header name"},
		{"X-Line: a\nb", "", "", "line break"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			n, v, err := Parse(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse(%q) error %v, want one saying %q", tc.in, err, tc.err)
				}
				return
			}
			if err != nil || n != tc.name || v != tc.value {
				t.Fatalf("Parse(%q) = %q, %q, %v; want %q, %q", tc.in, n, v, err, tc.name, tc.value)
			}
		})
	}
}

// A malformed value is never echoed in the error: it may be a token.
func TestParseHidesValues(t *testing.T) {
	for _, in := range []string{"Authorization: Bearer s3cr3t\r\nX: y", "Authorization Bearer s3cr3t", "Bad Name: s3cr3t"} {
		_, _, err := Parse(in)
		if err == nil || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("Parse(%q) error %v: want one that does not quote the value", in, err)
		}
	}
}

func TestParseAll(t *testing.T) {
	h, err := ParseAll([]string{"X-A: 1", "x-a: 2", "Authorization: Bearer t"})
	if err != nil {
		t.Fatal(err)
	}
	want := http.Header{"X-A": {"1", "2"}, "Authorization": {"Bearer t"}}
	if !reflect.DeepEqual(h, want) {
		t.Fatalf("ParseAll = %v, want %v", h, want)
	}
	if h, err := ParseAll(nil); h != nil || err != nil {
		t.Fatalf("ParseAll(nil) = %v, %v", h, err)
	}
	if _, err := ParseAll([]string{"ok: 1", "bad", "also bad"}); err == nil || strings.Count(err.Error(), "want 'Name: value'") != 2 {
		t.Fatalf("ParseAll reports %v, want both bad lines", err)
	}
}
