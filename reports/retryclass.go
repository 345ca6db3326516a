package reports

import (
	"bytes"
	"fmt"
	"strings"
)

// writeRetryClasses writes the retry-class table of the console summary:
// one line per tool (class, target, tool, key), then its evidence, indented
// (all of it when verbose, else the deciding line).
func writeRetryClasses(b *bytes.Buffer, rows []ToolClass, verbose bool) {
	if len(rows) == 0 {
		return
	}
	b.WriteString("retry classes (Safe: read-only, retry freely; Conditional: retry with the same key or arguments; Unsafe: do not retry, reconcile first):\n")
	tw, kw := 0, 0
	for _, r := range rows {
		tw = max(tw, len(oneLine(r.Target)))
		kw = max(kw, len(oneLine(r.Tool)))
	}
	for _, r := range rows {
		line := fmt.Sprintf("  %-11s  %-*s  %-*s", r.Class, tw, oneLine(r.Target), kw, oneLine(r.Tool))
		if r.Key != "" {
			line += "  key " + oneLine(r.Key)
		}
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteByte('\n')
		ev := r.Evidence
		if !verbose && len(ev) > 0 {
			ev = ev[len(ev)-1:]
		}
		for _, e := range ev {
			b.WriteString("               " + oneLine(e) + "\n")
		}
	}
	b.WriteByte('\n')
}

// retryClassProps renders the table as JUnit properties, one per tool:
// name "retryClass <target> <tool>", value "Class (key K): evidence; ...".
func retryClassProps(rows []ToolClass) []junitProp {
	var out []junitProp
	for _, r := range rows {
		v := string(r.Class)
		if r.Key != "" {
			v += " (key " + r.Key + ")"
		}
		if len(r.Evidence) > 0 {
			v += ": " + strings.Join(r.Evidence, "; ")
		}
		out = append(out, junitProp{Name: xmlSafe("retryClass " + r.Target + " " + r.Tool), Value: xmlSafe(v)})
	}
	return out
}
