//go:build unix

package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// row is one line of the table: a metric, how its values read, and the
// target the mcp-conform column is held to.
type row struct {
	label  string
	metric string
	cpu    bool // the proxies' CPU per request instead of the value
	higher bool // higher is better (a rate)
	// target: "toxiproxy" (no worse than toxiproxy's), "ahead" (better
	// than toxiproxy's), "relay1.1" (stdio: within ×1.1 of the relay), ""
	// (shown, no target).
	target string
}

var rows = []row{
	{"sequential JSON POST round trip, p50 µs", "seq-p50", false, false, "toxiproxy"},
	{"sequential JSON POST round trip, p99 µs", "seq-p99", false, false, ""},
	{"16 parallel callers, requests/s", "par-rps", false, true, "toxiproxy"},
	{"proxy CPU per request, sequential, µs", "seq-p50", true, false, "toxiproxy"},
	{"proxy CPU per request, 16 parallel callers, µs", "par-rps", true, false, "toxiproxy"},
	{"SSE time to first event, p50 µs", "ttfe-p50", false, false, "toxiproxy"},
	{"SSE time to first event, p99 µs", "ttfe-p99", false, false, ""},
	{"SSE 10 000 × 200 B events, events/s", "sse-eps", false, true, "ahead"},
	{"proxy CPU per SSE event, µs", "sse-eps", true, false, ""},
	{"stdio round trip p50 µs (toxiproxy column: a plain Go line relay process)", "stdio-p50", false, false, "relay1.1"},
}

// stats is a median with its min and max.
type stats struct{ med, lo, hi float64 }

func stat(v []float64) stats {
	if len(v) == 0 {
		return stats{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stats{m, s[0], s[len(s)-1]}
}

func num(x float64) string {
	a := x
	if a < 0 {
		a = -a
	}
	switch {
	case a >= 10000:
		return fmt.Sprintf("%d", int64(x+0.5))
	case a >= 100:
		return fmt.Sprintf("%.0f", x)
	case a >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

func (s stats) String() string { return fmt.Sprintf("%s (%s–%s)", num(s.med), num(s.lo), num(s.hi)) }

func (s stats) ratio() string {
	return fmt.Sprintf("×%.2f (%.2f–%.2f)", s.med, s.lo, s.hi)
}

// report writes the table: per path, the median of the rounds with their
// min–max; for the proxies, the ratio to direct taken within each round.
func report(samples []sample, rounds int, sz sizes, elapsed time.Duration) string {
	// by[metric][path] is the per-round values (index round-1).
	by := map[string]map[string][]float64{}
	cpu := map[string]map[string][]float64{}
	for _, s := range samples {
		put := func(m map[string]map[string][]float64, v float64) {
			if m[s.Metric] == nil {
				m[s.Metric] = map[string][]float64{}
			}
			m[s.Metric][s.Path] = append(m[s.Metric][s.Path], v)
		}
		put(by, s.Value)
		if s.CPUus > 0 {
			put(cpu, s.CPUus)
		}
	}
	ratios := func(num, den []float64) []float64 {
		var out []float64
		for i := range min(len(num), len(den)) {
			if den[i] > 0 {
				out = append(out, num[i]/den[i])
			}
		}
		return out
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| metric | direct | toxiproxy v2.12.0, no toxic | mcp-conform proxy, no rule | mcp-conform ÷ toxiproxy, per round | target |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|\n")
	for _, r := range rows {
		r.label = strings.Replace(r.label, "10 000", groupDigits(sz.Stream), 1)
		second, third := "toxiproxy", "mcp-conform"
		if r.metric == "stdio-p50" {
			second = "relay"
		}
		var d, t, m []float64
		if r.cpu {
			t, m = cpu[r.metric][second], cpu[r.metric][third]
		} else {
			d, t, m = by[r.metric]["direct"], by[r.metric][second], by[r.metric][third]
		}
		if len(m) == 0 {
			continue
		}
		var dc, tc, mc string
		if r.cpu {
			dc, tc, mc = "–", stat(t).String(), stat(m).String()
		} else {
			dc = stat(d).String()
			tc = fmt.Sprintf("%s · %s", stat(ratios(t, d)).ratio(), num(stat(t).med))
			mc = fmt.Sprintf("%s · %s", stat(ratios(m, d)).ratio(), num(stat(m).med))
		}
		mt := ratios(m, t) // the same per round, whatever the denominator
		better := 0
		for _, x := range mt {
			if (r.higher && x >= 1) || (!r.higher && x <= 1) {
				better++
			}
		}
		rel := fmt.Sprintf("×%.2f (%.2f–%.2f), at or better in %d of %d", stat(mt).med, stat(mt).lo, stat(mt).hi, better, len(mt))
		target := "–"
		med := stat(mt).med
		switch r.target {
		case "toxiproxy":
			target = verdict(r.higher && med >= 1 || !r.higher && med <= 1, "no worse than toxiproxy")
		case "ahead":
			target = verdict(r.higher && med > 1 || !r.higher && med < 1, "ahead of toxiproxy")
		case "relay1.1":
			target = verdict(med <= 1.1, "within ×1.1 of the relay")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r.label, dc, tc, mc, rel, target)
	}
	fmt.Fprintf(&b, "\n%d rounds in %.0f s; per round and path: %d sequential round trips, %d callers for %s, %d event-stream POSTs, %d × %d-event streams, %d stdio round trips.\n",
		rounds, elapsed.Seconds(), sz.Seq, sz.Callers, sz.Parallel, sz.TTFE, sz.Streams, sz.Stream, sz.Stdio)
	return b.String()
}

// groupDigits writes n with a space between thousands: 10 000.
func groupDigits(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + " " + s[i:]
	}
	return s
}

func verdict(ok bool, what string) string {
	if ok {
		return "met: " + what
	}
	return "**missed**: " + what
}
