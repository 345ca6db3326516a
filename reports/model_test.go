package reports

import "testing"

func TestExitCode(t *testing.T) {
	tests := []struct {
		name   string
		s      Summary
		strict bool
		want   int
	}{
		{"empty", Summary{}, false, 0},
		{"all pass", Summary{Pass: 3}, false, 0},
		{"skip only", Summary{Skip: 2}, true, 0},
		{"warn not strict", Summary{Pass: 1, Warn: 2}, false, 0},
		{"warn strict", Summary{Pass: 1, Warn: 2}, true, 1},
		{"fail", Summary{Pass: 1, Fail: 1}, false, 1},
		{"fail strict", Summary{Fail: 1, Warn: 1}, true, 1},
		{"error", Summary{Error: 1}, false, 2},
		{"error beats fail", Summary{Fail: 3, Error: 1}, false, 2},
		{"error beats warn strict", Summary{Warn: 3, Error: 1}, true, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExitCode(tt.s, tt.strict); got != tt.want {
				t.Errorf("ExitCode(%+v, %v) = %d, want %d", tt.s, tt.strict, got, tt.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	got := Summarize(sampleReport().Checks)
	want := Summary{Pass: 2, Fail: 1, Warn: 1, Skip: 1, Error: 1}
	if got != want {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
	if got := Summarize([]Check{{Status: "BOGUS"}}); got != (Summary{}) {
		t.Errorf("unknown status counted: %+v", got)
	}
}
