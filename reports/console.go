package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ConsoleOptions tunes WriteConsole.
type ConsoleOptions struct {
	// Color wraps statuses and the verdict in ANSI colour codes. Set it only
	// when the output is a terminal.
	Color bool
	// Verbose adds each check's duration, the target's command or URL, and the
	// transcripts of FAIL, WARN and ERROR checks.
	Verbose bool
	// Strict makes WARN fail the verdict and exit code, as --strict does.
	Strict bool
	// StrictBaseline makes stale baseline entries fail the verdict, as
	// --strict-baseline does.
	StrictBaseline bool
}

// ANSI escape sequences; nothing else is used for colour.
const (
	ansiReset   = "\x1b[0m"
	ansiBold    = "\x1b[1m"
	ansiRed     = "\x1b[31m"
	ansiGreen   = "\x1b[32m"
	ansiYellow  = "\x1b[33m"
	ansiMagenta = "\x1b[35m"
	ansiCyan    = "\x1b[36m"
)

// statusWidth is the width of the status column: len("ERROR").
const statusWidth = 5

// WriteConsole writes the human summary of a run: a header naming the target
// (transport, protocol version, mutant), one line per check
//
//	FAIL   IDEM-SAME-KEY          Same key runs the effect once
//	       executed 2 times for one key
//
// with the reason indented under every check that did not pass, a totals line
// "PASS 12  FAIL 1  WARN 2  SKIP 3  ERROR 0", a verdict line with the exit
// code ExitCode gives ("verdict: FAIL (exit 1)"), and last "14 checks gave a
// verdict, 3 skipped for lack of a role (mcp-conform init drafts one)".
// Totals are recomputed from the checks. Text from the target is escaped so
// it cannot drive the terminal.
func WriteConsole(w io.Writer, r *Report, opts ConsoleOptions) error {
	if r == nil {
		return errors.New("reports: nil report")
	}
	var b bytes.Buffer
	b.WriteString(header(r))
	b.WriteByte('\n')
	writeVersions(&b, r.Target.Versions)
	if opts.Verbose {
		if r.Target.Command != "" {
			fmt.Fprintf(&b, "  command: %s\n", oneLine(r.Target.Command))
		}
		if r.Target.URL != "" {
			fmt.Fprintf(&b, "  url: %s\n", oneLine(r.Target.URL))
		}
	}
	b.WriteByte('\n')

	// With several transports in one report, each line names its own.
	transports, versions := map[string]bool{}, map[string]bool{}
	for _, c := range r.Checks {
		transports[c.Transport] = true
		if c.ProtocolVersion != "" {
			versions[c.ProtocolVersion] = true
		}
	}
	label := func(c Check) string {
		var tags []string
		if c.Target != "" {
			tags = append(tags, oneLine(c.Target))
		}
		if len(transports) > 1 && c.Transport != "" {
			tags = append(tags, oneLine(c.Transport))
		}
		if len(versions) > 1 && c.ProtocolVersion != "" {
			tags = append(tags, oneLine(c.ProtocolVersion))
		}
		if len(tags) == 0 {
			return oneLine(c.ID)
		}
		return oneLine(c.ID) + " [" + strings.Join(tags, " ") + "]"
	}
	idWidth := 0
	for _, c := range r.Checks {
		idWidth = max(idWidth, len(label(c)))
	}
	indent := strings.Repeat(" ", statusWidth+2)
	for _, c := range r.Checks {
		id := label(c)
		line := paint(opts.Color, c.Status, pad(statusLabel(c.Status), statusWidth)) + "  " + id
		if title := oneLine(c.Title); title != "" {
			line += strings.Repeat(" ", idWidth-len(id)) + "  " + title
		}
		if opts.Verbose {
			line += "  (" + formatMs(c.DurationMs) + ")"
		}
		if c.Flaky {
			line += "  FLAKY"
		}
		b.WriteString(line)
		b.WriteByte('\n')
		if c.Status == Pass {
			continue
		}
		if c.Reason != "" {
			for _, l := range strings.Split(strings.TrimRight(c.Reason, "\n"), "\n") {
				b.WriteString(strings.TrimRight(indent+oneLine(l), " "))
				b.WriteByte('\n')
			}
		}
		if c.Source != "" && (c.Status == Fail || c.Status == Warn) {
			b.WriteString(indent + oneLine(sourceLine(c)) + "\n")
		}
		if c.Expected != "" {
			b.WriteString(indent + "expected by the baseline: " + oneLine(c.Expected) + "\n")
		}
		if c.Flaky {
			for i, run := range c.Runs {
				l := fmt.Sprintf("%srun %d: %s", indent, i+1, run.Status)
				if run.Reason != "" {
					l += " " + clipLine(oneLine(run.Reason), 160)
				}
				b.WriteString(l + "\n")
			}
		}
		if opts.Verbose && keepsTranscript(c.Status) && len(c.Transcript) > 0 {
			var t bytes.Buffer
			FormatTranscript(&t, c.Transcript)
			for _, l := range strings.SplitAfter(t.String(), "\n") {
				if l != "" {
					b.WriteString(indent + l)
				}
			}
		}
	}
	if len(r.Checks) == 0 {
		b.WriteString("no checks ran\n")
	}
	b.WriteByte('\n')
	writeRetryClasses(&b, r.RetryClasses, opts.Verbose)

	s := Summarize(r.Checks)
	fmt.Fprintf(&b, "%s %d  %s %d  %s %d  %s %d  %s %d\n",
		paint(opts.Color, Pass, "PASS"), s.Pass,
		paint(opts.Color, Fail, "FAIL"), s.Fail,
		paint(opts.Color, Warn, "WARN"), s.Warn,
		paint(opts.Color, Skip, "SKIP"), s.Skip,
		paint(opts.Color, Error, "ERROR"), s.Error)
	if s.Flaky > 0 {
		fmt.Fprintf(&b, "FLAKY %d (the verdict changed between the %d runs; each counts as its worst run)\n", s.Flaky, r.Repeat)
	}
	writeBaseline(&b, r, opts.StrictBaseline)
	b.WriteString(verdict(r, s, opts))
	b.WriteByte('\n')
	b.WriteString(roleLine(r.Checks))
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// sourceLine says which sentence a verdict rests on and where it comes
// from, e.g. "clause: MUST, from the MCP specification, 2025-11-25".
func sourceLine(c Check) string {
	l := "clause: "
	if c.Level != "" {
		l += string(c.Level) + ", from "
	}
	return l + c.Source.Describe(c.ProtocolVersion)
}

// countedFailures sums the checks that count toward the exit code: all but
// the baseline's expected failures.
func countedFailures(r *Report) Summary {
	var counted []Check
	for _, c := range r.Checks {
		if c.Expected == "" {
			counted = append(counted, c)
		}
	}
	return Summarize(counted)
}

// runDetails lists what the header lines of the console and Markdown
// summaries say about the run besides the target's name: transport,
// protocol version, mutant, seed(s) and repeat count, each when set.
func runDetails(r *Report) []string {
	var details []string
	if r.Target.Transport != "" {
		details = append(details, r.Target.Transport)
	}
	if r.Target.ProtocolVersion != "" {
		details = append(details, "protocol "+r.Target.ProtocolVersion)
	}
	if r.Target.Mutant != "" {
		details = append(details, "mutant "+r.Target.Mutant)
	}
	if r.Seed != 0 {
		details = append(details, fmt.Sprintf("seed %d", r.Seed))
	} else if len(r.Seeds) > 0 {
		details = append(details, "seeds "+joinSeeds(r.Seeds))
	}
	if r.Repeat > 1 {
		details = append(details, fmt.Sprintf("each check run %d times", r.Repeat))
	}
	return details
}

// header is the first line of the console summary.
func header(r *Report) string {
	tool := orDefault(r.Tool.Name, "mcp-conform")
	if r.Tool.Version != "" {
		tool += " " + r.Tool.Version
	}
	details := runDetails(r)
	h := tool + "  target " + orDefault(r.Target.Name, "(unnamed)")
	if len(details) > 0 {
		h += " (" + strings.Join(details, ", ") + ")"
	}
	return oneLine(h)
}

// writeVersions writes, per target and transport, the protocol versions the
// server accepted and those it refused, with the reason:
//
//	versions on stdio: accepted 2026-07-28, 2025-11-25; refused 2025-06-18 (…)
func writeVersions(b *bytes.Buffer, vs []TargetVersion) {
	var keys []string
	accepted, refused := map[string][]string{}, map[string][]string{}
	for _, v := range vs {
		k := v.Transport
		if v.Target != "" {
			k = v.Target + " " + v.Transport
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
		switch v.Status {
		case Accepted:
			accepted[k] = append(accepted[k], oneLine(v.ProtocolVersion))
		case Refused:
			r := oneLine(v.ProtocolVersion)
			if v.Reason != "" {
				r += " (" + oneLine(v.Reason) + ")"
			}
			refused[k] = append(refused[k], r)
		}
	}
	for _, k := range keys {
		var parts []string
		if a := accepted[k]; len(a) > 0 {
			parts = append(parts, "accepted "+strings.Join(a, ", "))
		}
		if r := refused[k]; len(r) > 0 {
			parts = append(parts, "refused "+strings.Join(r, "; "))
		}
		fmt.Fprintf(b, "  versions on %s: %s\n", oneLine(k), strings.Join(parts, "; "))
	}
}

// verdict is the closing line: the verdict and the exit code it implies.
func verdict(r *Report, s Summary, opts ConsoleOptions) string {
	code := RunExitCode(r, opts.Strict, opts.StrictBaseline)
	var word Status
	switch code {
	case 0:
		word = Pass
	case 1:
		word = Fail
	default:
		word = Error
	}
	line := "verdict: " + paint(opts.Color, word, string(word))
	if code == 0 && s.Warn > 0 {
		line += fmt.Sprintf(" with %d %s", s.Warn, plural(s.Warn, "warning", "warnings"))
	}
	notes := []string{"exit " + strconv.Itoa(code)}
	counted := countedFailures(r)
	switch {
	case code == 1 && counted.Fail == 0 && counted.Warn > 0 && opts.Strict:
		notes = append(notes, "strict: warnings fail")
	case code == 1 && counted.Fail == 0:
		notes = append(notes, "strict baseline: stale entries fail")
	}
	if r.Baseline != nil && r.Baseline.Expected > 0 {
		notes = append(notes, fmt.Sprintf("%d expected by the baseline", r.Baseline.Expected))
	}
	if s == (Summary{}) {
		notes = append(notes, "no checks ran")
	}
	line += " (" + strings.Join(notes, "; ") + ")"
	return line
}

// roleLine is the console's last line: how many checks gave a verdict
// (PASS, FAIL or WARN) and how many SKIPped because the target manifest
// lacks a role (MissingRoleOf), pointing at the command that drafts one.
func roleLine(checks []Check) string {
	verdicts, missing := 0, 0
	for _, c := range checks {
		switch {
		case c.Status == Pass || c.Status == Fail || c.Status == Warn:
			verdicts++
		case MissingRoleOf(c) != "":
			missing++
		}
	}
	line := fmt.Sprintf("%d %s a verdict, %d skipped for lack of a role", verdicts, plural(verdicts, "check gave", "checks gave"), missing)
	if missing > 0 {
		line += " (mcp-conform init drafts one)"
	}
	return line
}

// WriteProgress writes one live progress line for a check that just ended:
//
//	[ 3/14] PASS  CANCEL-STDIO-SUPPRESS (412ms, 360ms on the target)
//	[ 4/14] SKIP  IDEM-SAME-KEY (0ms): the manifest declares no mutation role
//
// The time is the check's, then how much of it a request waited on the
// target (TargetMs, when any). The reason's first line follows for checks
// that did not pass. color adds ANSI colour to the status.
func WriteProgress(w io.Writer, done, total int, c Check, color bool) error {
	n := len(strconv.Itoa(total))
	took := formatMs(c.DurationMs)
	if c.TargetMs > 0 {
		took += ", " + formatMs(c.TargetMs) + " on the target"
	}
	line := fmt.Sprintf("[%*d/%d] %s  %s (%s)", n, done, total,
		paint(color, c.Status, pad(statusLabel(c.Status), statusWidth)),
		oneLine(c.ID)+transportSuffix(c), took)
	if c.Status != Pass && c.Reason != "" {
		first, _, _ := strings.Cut(c.Reason, "\n")
		line += ": " + truncated(first, 160, len(first))
	}
	_, err := io.WriteString(w, line+"\n")
	return err
}

// transportSuffix names a check's transport in a progress line.
func transportSuffix(c Check) string {
	if c.Transport == "" {
		return ""
	}
	return " [" + oneLine(c.Transport) + "]"
}

// statusLabel is how a status is printed; an empty one shows as "?".
func statusLabel(s Status) string {
	if s == "" {
		return "?"
	}
	return oneLine(string(s))
}

// paint colours text by status when color is set.
func paint(color bool, s Status, text string) string {
	if !color {
		return text
	}
	var code string
	switch s {
	case Pass:
		code = ansiGreen
	case Fail:
		code = ansiBold + ansiRed
	case Warn:
		code = ansiYellow
	case Skip:
		code = ansiCyan
	default:
		code = ansiBold + ansiMagenta
	}
	return code + text + ansiReset
}

// pad right-pads s with spaces to width bytes.
func pad(s string, width int) string {
	if len(s) >= width {
		return s
	}
	return s + strings.Repeat(" ", width-len(s))
}

// formatMs renders a duration given in milliseconds: "412ms", "12.3s".
func formatMs(ms float64) string {
	ms = finite(ms)
	switch {
	case ms < 0:
		ms = 0
	case ms >= 10000:
		return strconv.FormatFloat(ms/1000, 'f', 1, 64) + "s"
	case ms >= 1000:
		return strconv.FormatFloat(ms/1000, 'f', 2, 64) + "s"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64) + "ms"
}

// plural picks the singular or the plural form for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// clipLine shortens one line to n bytes (at a rune boundary), with "…".
func clipLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// joinSeeds writes seeds as "1, 2, 3".
func joinSeeds(seeds []uint64) string {
	out := make([]string, len(seeds))
	for i, s := range seeds {
		out[i] = strconv.FormatUint(s, 10)
	}
	return strings.Join(out, ", ")
}
