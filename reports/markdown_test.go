package reports

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriteMarkdownGolden pins the summary of the sample run (a check of
// every status) as the Action writes it: with an artifact link.
func TestWriteMarkdownGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts MarkdownOptions
	}{
		{"summary.md", MarkdownOptions{HTMLName: "report.html", ArtifactName: "mcp-conform-reports", ArtifactURL: "https://github.com/o/r/actions/runs/1/artifacts/2"}},
		{"summary_plain.md", MarkdownOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteMarkdown(&b, sampleReport(), tc.opts); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, b.Bytes())
		})
	}
}

// cells splits a Markdown table row on its unescaped pipes.
func cells(row string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row):
			cur.WriteByte(row[i])
			cur.WriteByte(row[i+1])
			i++
		case row[i] == '|':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(out, cur.String())
}

// TestWriteMarkdownEscapesTargetText: a reason, title and clause full of
// Markdown, HTML and table syntax, and line breaks, stay in their cell and
// render as text: every row has the header's cell count, and no tag, link,
// emphasis or code span of the target's survives unescaped.
func TestWriteMarkdownEscapesTargetText(t *testing.T) {
	hostile := "a|b <script>alert(1)</script> [x](http://evil) ![i](http://evil/i.png) **bold** `code` _u_ ~s~ #h &amp;\n| --- | injected row |"
	r := &Report{
		Target: Target{Name: "srv|<b>x</b>", Transport: "stdio"},
		Checks: []Check{
			{ID: "ROBUST-PARSE-ERROR", Title: hostile, Level: Must, Status: Fail, Reason: hostile, Clause: hostile, Spec: []string{"seeds/x (y).md"}},
			{ID: "SSE-HEARTBEAT", Level: Should, Status: Warn, Reason: strings.Repeat("long ", 200)},
		},
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, r, MarkdownOptions{ArtifactURL: "https://x/a b(c)"}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	var header []string
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "| status") && (header == nil || !strings.HasPrefix(line, "|")) {
			continue
		}
		if header == nil {
			header = cells(line)
			continue
		}
		rows++
		if got := cells(line); len(got) != len(header) {
			t.Errorf("row has %d cells, header %d:\n%s", len(got), len(header), line)
		}
	}
	if rows != 3 { // the separator and two checks
		t.Errorf("%d table lines after the header, want 3:\n%s", rows, out)
	}
	for _, bad := range []string{"<script>", "<b>", "[x](http://evil)", "![i]", "**bold**", "`code`", " _u_", "~s~", "a|b", "https://x/a b"} {
		if strings.Contains(out, bad) {
			t.Errorf("summary holds %q unescaped:\n%s", bad, out)
		}
	}
	wantContains(t, "summary", out, `a\|b &lt;script&gt;`, `\[x\](http://evil)`, `\*\*bold\*\*`, "\\`code\\`", `&amp;amp;\\n\| --- \|`, "https://x/a%20b%28c%29", "… (1000 bytes)")
}

// TestWriteMarkdownVerdict: the heading follows the exit code, computed
// with --strict/--strict-baseline or given by the caller.
func TestWriteMarkdownVerdict(t *testing.T) {
	warn := []Check{{ID: "A", Level: Must, Status: Pass}, {ID: "B", Level: Should, Status: Warn, Reason: "r"}}
	one, two := 1, 2
	for _, tc := range []struct {
		name   string
		checks []Check
		base   *BaselineResult
		opts   MarkdownOptions
		want   string
	}{
		{"pass", []Check{{ID: "A", Level: Must, Status: Pass}}, nil, MarkdownOptions{}, "## mcp-conform: ✅ PASS\n"},
		{"warnings", warn, nil, MarkdownOptions{}, "## mcp-conform: ✅ PASS with 1 warning\n"},
		{"strict", warn, nil, MarkdownOptions{Strict: true}, "## mcp-conform: ❌ FAIL (strict: warnings fail)\n"},
		{"exit code given", warn, nil, MarkdownOptions{ExitCode: &one}, "## mcp-conform: ❌ FAIL (strict: warnings fail)\n"},
		{"harness", warn, nil, MarkdownOptions{ExitCode: &two}, "## mcp-conform: ⛔ ERROR\n"},
		{"stale baseline", []Check{{ID: "A", Level: Must, Status: Pass}}, &BaselineResult{File: "b.yaml", Stale: []BaselineEntry{{ID: "A", Transport: "stdio"}}},
			MarkdownOptions{StrictBaseline: true}, "## mcp-conform: ❌ FAIL (strict baseline: stale entries fail)\n"},
		{"no checks", nil, nil, MarkdownOptions{}, "## mcp-conform: ✅ PASS\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteMarkdown(&b, &Report{Checks: tc.checks, Baseline: tc.base}, tc.opts); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(b.String(), tc.want) {
				t.Errorf("got\n%s\nwant it to start with %q", b.String(), tc.want)
			}
			if tc.base != nil && !strings.Contains(b.String(), "Baseline `b.yaml`: 0 expected failures (not counted), 1 stale (`A [stdio]` now pass: remove them).") {
				t.Errorf("baseline line missing:\n%s", b.String())
			}
			if tc.checks == nil && !strings.Contains(b.String(), "No checks ran.") {
				t.Errorf("no 'No checks ran.':\n%s", b.String())
			}
		})
	}
}

// TestWriteMarkdownExpectedAndVariants: a baseline's expected failure is
// marked as such, and with several transports and versions each row names
// its own; rows past MaxRows are counted.
func TestWriteMarkdownExpectedAndVariants(t *testing.T) {
	r := &Report{Checks: []Check{
		{ID: "X-1", Level: Must, Status: Fail, Reason: "r1", Transport: "stdio", ProtocolVersion: "2025-11-25", Expected: "known bug #12"},
		{ID: "X-2", Level: Must, Status: Fail, Reason: "r2", Transport: "http", ProtocolVersion: "2026-07-28"},
		{ID: "X-3", Level: Should, Status: Warn, Reason: "r3", Transport: "http", ProtocolVersion: "2026-07-28"},
	}, Baseline: &BaselineResult{File: "ci/b.yaml", Expected: 1}}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, r, MarkdownOptions{MaxRows: 2}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	wantContains(t, "summary", out,
		"## mcp-conform: ❌ FAIL\n",
		"| FAIL (expected) | `X-1` [stdio 2025-11-25] | MUST |  | r1 — expected by the baseline: known bug \\#12 |",
		"| **FAIL** | `X-2` [http 2026-07-28] | MUST |  | r2 |",
		"…and 1 more: see the full report.",
		"Baseline `ci/b.yaml`: 1 expected failure (not counted), 0 stale.",
	)
	if strings.Contains(out, "X-3") {
		t.Errorf("row past MaxRows written:\n%s", out)
	}
}
