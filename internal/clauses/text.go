package clauses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes the report in the JSON shape of `mcp-conform coverage
// --format json`: {"clauses":[{"id","level","versions","status","checks",
// "mutants",...}],"summary":{...}}.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report as tables, one per page: a row per clause
// with its status in each version the page has, the checks and mutants that
// prove it, then the page's counts per version; a summary per side and
// version ends it.
func (r Report) WriteText(w io.Writer) error {
	vs := Versions()
	byPage := map[string][]ClauseCoverage{}
	var order []string
	for _, cc := range r.Clauses {
		if _, seen := byPage[cc.Page]; !seen {
			order = append(order, cc.Page)
		}
		byPage[cc.Page] = append(byPage[cc.Page], cc)
	}
	counts := map[string]map[string]PageCounts{}
	for _, pc := range r.Summary.Pages {
		if counts[pc.Page] == nil {
			counts[pc.Page] = map[string]PageCounts{}
		}
		counts[pc.Page][pc.Version] = pc
	}
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	for _, page := range order {
		title := page
		if r.set != nil {
			title = page + " — " + r.set.Pages[page].Title
		}
		fmt.Fprintf(tw, "%s\n", title)
		fmt.Fprintf(tw, "  id\tlevel")
		for _, v := range vs {
			fmt.Fprintf(tw, "\t%s", v)
		}
		fmt.Fprintf(tw, "\tchecks [mutants]\n")
		var reasons []string
		for _, cc := range byPage[page] {
			id := cc.ID
			if cc.Proposed {
				id += " (proposed)"
			}
			fmt.Fprintf(tw, "  %s\t%s", id, cc.Level)
			for _, v := range vs {
				s, ok := cc.ByVersion[v]
				switch {
				case !ok:
					s = "-"
				case IsNotTestable(s):
					reasons = append(reasons, fmt.Sprintf("    %s %s", cc.ID, s))
					s = notTestable
				}
				fmt.Fprintf(tw, "\t%s", s)
			}
			proof := strings.Join(cc.Checks, ", ")
			if len(cc.Mutants) > 0 {
				proof += " [" + strings.Join(cc.Mutants, ", ") + "]"
			}
			if len(cc.Limits) > 0 {
				proof += " limits: " + strings.Join(cc.Limits, "; ")
			}
			fmt.Fprintf(tw, "\t%s\n", proof)
		}
		fmt.Fprintf(tw, "  covered\t")
		for _, v := range vs {
			pc, ok := counts[page][v]
			if !ok {
				fmt.Fprintf(tw, "\t-")
				continue
			}
			fmt.Fprintf(tw, "\t%d/%d %.0f%%", pc.Covered, pc.Testable, pc.CoveredPct)
		}
		fmt.Fprintf(tw, "\t\n")
		for _, line := range dedupe(reasons) {
			fmt.Fprintf(tw, "%s\n", line)
		}
		fmt.Fprintf(tw, "\n")
	}
	for _, side := range []Side{Server, Client} {
		for _, v := range vs {
			c := r.Summary.Versions[side][v]
			if c == nil || c.Clauses == 0 {
				continue
			}
			fmt.Fprintf(tw, "%s %s\t%d clauses\t%d testable\t%d covered\t%d partial\t%d none\t%d not testable\t%d proposed\t%.1f%% covered\n",
				side, v, c.Clauses, c.Testable, c.Covered, c.Partial, c.None, c.NotTestable, c.Proposed, c.CoveredPct)
		}
	}
	if len(r.Summary.Unproven) > 0 {
		fmt.Fprintf(tw, "checks without a mutant: %s\n", strings.Join(r.Summary.Unproven, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// The padding of a last, empty column leaves trailing blanks.
	lines := strings.SplitAfter(buf.String(), "\n")
	for i, l := range lines {
		if t, ok := strings.CutSuffix(l, "\n"); ok {
			lines[i] = strings.TrimRight(t, " ") + "\n"
		}
	}
	_, err := io.WriteString(w, strings.Join(lines, ""))
	return err
}

func dedupe(lines []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lines {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}
