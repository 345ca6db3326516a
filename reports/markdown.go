package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MarkdownOptions tunes WriteMarkdown.
type MarkdownOptions struct {
	// Strict and StrictBaseline decide the verdict as --strict and
	// --strict-baseline do, when ExitCode is nil.
	Strict, StrictBaseline bool
	// ExitCode, when set, is the exit code the run ended with (a CI step
	// that read the report back knows it); the verdict follows it.
	ExitCode *int
	// SpecBase is what specification references are linked under, as in
	// HTMLOptions; empty means DefaultSpecBase.
	SpecBase string
	// HTMLName is the HTML report's file name ("report.html"), when one
	// was written.
	HTMLName string
	// ArtifactName and ArtifactURL name and link the CI artifact that holds
	// the HTML report; each failing check's row links to it.
	ArtifactName, ArtifactURL string
	// MaxRows bounds the rows of the table of checks that did not pass;
	// zero means DefaultMarkdownRows. The rest are counted in a line.
	MaxRows int
}

// DefaultMarkdownRows is how many checks the Markdown summary lists.
const DefaultMarkdownRows = 100

// markdownCellMax bounds a reason or clause in a table cell, in bytes.
const markdownCellMax = 300

// WriteMarkdown writes the summary of a run as GitHub-flavoured Markdown,
// the shape a CI run page shows ($GITHUB_STEP_SUMMARY, a merge request
// note):
//
//   - a heading with the verdict, and a line naming the target (transport,
//     protocol version, mutant), the tool's version and the exit code;
//   - a table of the checks counted by level (MUST, SHOULD) and status;
//   - the baseline's effect, when one was applied;
//   - a table with a row per check that did not pass (FAIL and ERROR, then
//     WARN): status, id and title, level, the clause it enforces with links
//     to its spec pages, the reason's first line, and a link to the
//     artifact holding the HTML report, where its transcript is;
//   - where the transcripts are.
//
// Counts are recomputed from the checks. Text from the target (reasons,
// names) is made one line and its Markdown and HTML characters escaped, so
// it renders as the text it is.
func WriteMarkdown(w io.Writer, r *Report, opts MarkdownOptions) error {
	if r == nil {
		return errors.New("reports: nil report")
	}
	code := RunExitCode(r, opts.Strict, opts.StrictBaseline)
	if opts.ExitCode != nil {
		code = *opts.ExitCode
	}
	s := Summarize(r.Checks)
	var b bytes.Buffer

	fmt.Fprintf(&b, "## mcp-conform: %s\n\n", markdownVerdict(r, s, code))
	b.WriteString(markdownTarget(r, code))
	b.WriteString("\n\n")

	if len(r.Checks) == 0 {
		b.WriteString("No checks ran.\n")
	} else {
		b.WriteString("| level | checks | PASS | FAIL | WARN | SKIP | ERROR |\n")
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
		for _, row := range levelCounts(r.Checks) {
			writeCountRow(&b, row.Level, row.Total, row.Summary)
		}
		writeCountRow(&b, "**all**", len(r.Checks), s)
	}
	writeMarkdownBaseline(&b, r)

	var bad []Check
	for _, st := range []Status{Fail, Error, Warn} {
		for _, c := range r.Checks {
			if c.Status == st {
				bad = append(bad, c)
			}
		}
	}
	if len(bad) > 0 {
		writeProblemTable(&b, r, bad, opts)
	}
	if where := markdownEvidence(opts); where != "" && len(bad) > 0 {
		b.WriteString("\n" + where + "\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// markdownVerdict is the heading's verdict: the word the exit code means
// and, for a pass, the warnings it carries.
func markdownVerdict(r *Report, s Summary, code int) string {
	var v string
	switch code {
	case 0:
		v = "✅ PASS"
		if s.Warn > 0 {
			v += fmt.Sprintf(" with %d %s", s.Warn, plural(s.Warn, "warning", "warnings"))
		}
	case 1:
		v = "❌ FAIL"
		counted := countedFailures(r)
		if counted.Fail == 0 && counted.Warn > 0 {
			v += " (strict: warnings fail)"
		} else if counted.Fail == 0 && r.Baseline != nil && len(r.Baseline.Stale) > 0 {
			v += " (strict baseline: stale entries fail)"
		}
	default:
		v = "⛔ ERROR"
	}
	return v
}

// markdownTarget is the line under the heading.
func markdownTarget(r *Report, code int) string {
	details := runDetails(r)
	line := "Target **" + mdText(orDefault(r.Target.Name, "(unnamed)")) + "**"
	if len(details) > 0 {
		line += " (" + mdText(strings.Join(details, ", ")) + ")"
	}
	tool := orDefault(r.Tool.Name, "mcp-conform")
	if r.Tool.Version != "" {
		tool += " " + r.Tool.Version
	}
	parts := []string{line, mdText(tool), "exit " + strconv.Itoa(code)}
	if r.Duration > 0 {
		parts = append(parts, fmt.Sprintf("%d %s in %s", len(r.Checks), plural(len(r.Checks), "check", "checks"), formatMs(r.Duration)))
	}
	return strings.Join(parts, " · ")
}

// writeCountRow writes one row of the counts table; zero counts are blank.
func writeCountRow(b *bytes.Buffer, level string, total int, s Summary) {
	cell := func(n int) string {
		if n == 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s |\n", level, total,
		cell(s.Pass), cell(s.Fail), cell(s.Warn), cell(s.Skip), cell(s.Error))
}

// writeMarkdownBaseline says what the baseline did, when one was applied.
func writeMarkdownBaseline(b *bytes.Buffer, r *Report) {
	res := r.Baseline
	if res == nil {
		return
	}
	name := "Baseline"
	if res.File != "" {
		name += " `" + mdCode(res.File) + "`"
	}
	fmt.Fprintf(b, "\n%s: %d expected %s (not counted), %d stale", name, res.Expected,
		plural(res.Expected, "failure", "failures"), len(res.Stale))
	if len(res.Stale) > 0 {
		var ids []string
		for _, e := range res.Stale {
			ids = append(ids, "`"+mdCode(e.ID+qualifiers(e))+"`")
		}
		b.WriteString(" (" + strings.Join(ids, ", ") + " now pass: remove them)")
	}
	b.WriteString(".\n")
}

// writeProblemTable writes a row per check that did not pass.
func writeProblemTable(b *bytes.Buffer, r *Report, bad []Check, opts MarkdownOptions) {
	limit := opts.MaxRows
	if limit <= 0 {
		limit = DefaultMarkdownRows
	}
	tags := variantTags(r)
	link := opts.ArtifactURL != ""
	fmt.Fprintf(b, "\n### %d %s that did not pass\n\n", len(bad), plural(len(bad), "check", "checks"))
	b.WriteString("| status | check | level | clause | reason |")
	if link {
		b.WriteString(" transcript |")
	}
	b.WriteString("\n|---|---|---|---|---|")
	if link {
		b.WriteString("---|")
	}
	b.WriteByte('\n')
	for i, c := range bad {
		if i == limit {
			fmt.Fprintf(b, "\n…and %d more: see the full report.\n", len(bad)-limit)
			break
		}
		status := "**" + mdText(string(c.Status)) + "**"
		if c.Expected != "" {
			status = mdText(string(c.Status)) + " (expected)"
		}
		if c.Flaky {
			status += " FLAKY"
		}
		check := "`" + mdCode(c.ID) + "`"
		if t := tags(c); len(t) > 0 {
			check += " [" + mdText(strings.Join(t, " ")) + "]"
		}
		if c.Title != "" {
			check += " " + mdText(c.Title)
		}
		reason, _, _ := strings.Cut(c.Reason, "\n")
		reason = mdText(clip(reason))
		if c.Expected != "" {
			reason += " — expected by the baseline: " + mdText(clip(c.Expected))
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |", status, check, mdText(string(c.Level)), markdownClause(c, opts.SpecBase), reason)
		if link {
			fmt.Fprintf(b, " [report.html](%s) |", mdURL(opts.ArtifactURL))
		}
		b.WriteByte('\n')
	}
}

// markdownClause is a check's clause and links to its spec pages.
func markdownClause(c Check, specBase string) string {
	base := specBase
	if base == "" {
		base = DefaultSpecBase
	}
	var refs []string
	for _, ref := range c.Spec {
		name := strings.TrimSuffix(strings.TrimPrefix(ref, "specification/"), ".mdx")
		if href := specHref(base, ref); href != "" {
			refs = append(refs, "["+mdText(name)+"]("+mdURL(href)+")")
		} else if ref != "" {
			refs = append(refs, "`"+mdCode(ref)+"`")
		}
	}
	out := ""
	if c.Clause != "" {
		out = "“" + mdText(clip(c.Clause)) + "”"
	}
	if len(refs) > 0 {
		if out != "" {
			out += " "
		}
		out += "(" + strings.Join(refs, ", ") + ")"
	}
	return out
}

// markdownEvidence says where the transcripts of the failing checks are.
func markdownEvidence(opts MarkdownOptions) string {
	name := orDefault(opts.HTMLName, "report.html")
	switch {
	case opts.ArtifactURL != "":
		art := orDefault(opts.ArtifactName, "the reports")
		return "Transcripts and sequence diagrams of these checks: `" + mdCode(name) + "` in the artifact [" +
			mdText(art) + "](" + mdURL(opts.ArtifactURL) + ")."
	case opts.ArtifactName != "":
		return "Transcripts and sequence diagrams of these checks: `" + mdCode(name) + "` in the artifact " +
			mdText(opts.ArtifactName) + "."
	case opts.HTMLName != "":
		return "Transcripts and sequence diagrams of these checks: `" + mdCode(name) + "`."
	}
	return "Transcripts and sequence diagrams of these checks: run with `--html FILE`."
}

// clip shortens a cell's text to markdownCellMax bytes.
func clip(s string) string {
	if len(s) <= markdownCellMax {
		return s
	}
	return truncated(s, markdownCellMax, len(s))
}

// mdSpecial are the characters escaped in Markdown text: those that start
// emphasis, code, links, HTML and table cells.
var mdSpecial = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`,
	`<`, `&lt;`, `>`, `&gt;`, `&`, `&amp;`, `|`, `\|`, `~`, `\~`, `#`, `\#`, `!`, `\!`,
)

// mdText makes s one line of Markdown text that renders as s.
func mdText(s string) string { return mdSpecial.Replace(oneLine(s)) }

// mdCode makes s safe inside a one-backtick code span in a table cell.
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "|", `\|`).Replace(oneLine(s))
}

// mdURL makes a link destination safe: no spaces, parentheses or angle
// brackets to end it early.
func mdURL(u string) string {
	return strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29", "<", "%3C", ">", "%3E", "|", "%7C").Replace(oneLine(u))
}
