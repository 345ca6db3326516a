package reports

import (
	"bytes"
	"errors"
	"io"
	"strings"
)

// WriteGitHubAnnotations writes a GitHub Actions workflow command for each
// check that did not pass, so the run page shows it as an annotation:
//
//	::error title=FAIL IDEM-SAME-KEY (MUST)::Same key runs the effect once: effect ran 2 times …
//
// FAIL and ERROR checks are errors, WARN checks warnings, and a FAIL or
// WARN the baseline expects a notice. The message holds the title, the
// reason, the clause and its spec references. Everything is escaped as
// the runner wants (%, CR and LF in the message; also : and , in the
// title), so nothing a target wrote can start a workflow command of its
// own.
func WriteGitHubAnnotations(w io.Writer, r *Report) error {
	if r == nil {
		return errors.New("reports: nil report")
	}
	tags := variantTags(r)
	var b bytes.Buffer
	for _, c := range r.Checks {
		var cmd string
		switch {
		case c.Status != Fail && c.Status != Warn && c.Status != Error:
			continue
		case c.Expected != "":
			cmd = "notice"
		case c.Status == Warn:
			cmd = "warning"
		default:
			cmd = "error"
		}
		title := string(c.Status) + " " + c.ID
		if t := tags(c); len(t) > 0 {
			title += " [" + strings.Join(t, " ") + "]"
		}
		if c.Level != "" {
			title += " (" + string(c.Level) + ")"
		}
		var msg []string
		first := c.Title
		if c.Reason != "" {
			if first != "" {
				first += ": "
			}
			first += c.Reason
		}
		msg = append(msg, first)
		if c.Expected != "" {
			msg = append(msg, "expected by the baseline: "+c.Expected)
		}
		if c.Clause != "" {
			msg = append(msg, "clause: "+c.Clause)
		}
		if len(c.Spec) > 0 {
			msg = append(msg, "spec: "+strings.Join(c.Spec, ", "))
		}
		b.WriteString("::" + cmd + " title=" + escapeProperty(title) + "::" + escapeData(strings.Join(msg, "\n")) + "\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// escapeData escapes a workflow command's message: each line made safe
// (no control characters) and joined with an escaped LF.
func escapeData(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		l = oneLine(strings.TrimRight(l, "\r"))
		lines[i] = strings.ReplaceAll(l, "%", "%25")
	}
	return strings.Join(lines, "%0A")
}

// escapeProperty escapes a workflow command's property value.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", ":", "%3A", ",", "%2C").Replace(oneLine(s))
}

// variantTags returns, for a check, its transport and protocol version
// when the report holds checks of more than one of them (nil otherwise):
// what tells two runs of one check apart.
func variantTags(r *Report) func(Check) []string {
	transports, versions := map[string]bool{}, map[string]bool{}
	for _, c := range r.Checks {
		transports[c.Transport] = true
		if c.ProtocolVersion != "" {
			versions[c.ProtocolVersion] = true
		}
	}
	return func(c Check) []string {
		var t []string
		if len(transports) > 1 && c.Transport != "" {
			t = append(t, c.Transport)
		}
		if len(versions) > 1 && c.ProtocolVersion != "" {
			t = append(t, c.ProtocolVersion)
		}
		return t
	}
}
