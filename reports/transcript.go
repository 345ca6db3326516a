package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// transcriptMaxBytes is how much of a message or a stderr line FormatTranscript
// shows before it cuts the rest and says how long it was.
const transcriptMaxBytes = 300

// FormatTranscript writes entries to w, one readable line per entry, in order:
//
//	+123.4ms  c2s  {"jsonrpc":"2.0","id":1,"method":"ping"}
//	+130.0ms  s2c  FAULT rule=drop-reply fault=drop
//	+131.2ms  stderr | listening on stdio
//	+140.0ms  process: exited with status 1
//	+150.0ms  note: sent notifications/cancelled for id 1
//
// Every line starts with two spaces and the times are right-aligned.
// Messages are shown compacted and cut after 300 bytes ("… (N bytes)", N the
// size as it crossed); bytes that are not JSON are quoted. Control characters
// and invalid UTF-8 are escaped (\x1b, \n, \xff), so a hostile server cannot
// drive the terminal or break a line. Write errors are ignored: the console
// and JUnit writers that call it check their own.
func FormatTranscript(w io.Writer, entries []Entry) {
	if len(entries) == 0 {
		return
	}
	stamps := make([]string, len(entries))
	width := 0
	for i, e := range entries {
		stamps[i] = formatStamp(e.AtMs)
		width = max(width, len(stamps[i]))
	}
	var b strings.Builder
	for i, e := range entries {
		b.Reset()
		b.WriteString("  ")
		b.WriteString(strings.Repeat(" ", width-len(stamps[i])))
		b.WriteString(stamps[i])
		b.WriteString("  ")
		b.WriteString(entryBody(e))
		b.WriteByte('\n')
		io.WriteString(w, b.String())
	}
}

// formatStamp renders a transcript time as "+123.4ms".
func formatStamp(ms float64) string {
	return "+" + strconv.FormatFloat(finite(ms), 'f', 1, 64) + "ms"
}

// entryBody renders everything of an entry after its time stamp.
func entryBody(e Entry) string {
	switch e.Kind {
	case "message":
		return dirLabel(e.Dir) + "  " + messageText(e)
	case "fault":
		s := dirLabel(e.Dir) + "  FAULT rule=" + oneLine(orDash(e.Rule)) + " fault=" + oneLine(orDash(e.Fault))
		if e.Text != "" {
			s += "  " + oneLine(e.Text)
		}
		return s
	case "stderr":
		return "stderr | " + truncated(e.Text, transcriptMaxBytes, len(e.Text))
	case "process":
		return "process: " + oneLine(e.Text)
	case "note":
		return "note: " + oneLine(e.Text)
	}
	// An unknown kind still shows whatever it carries.
	kind := e.Kind
	if kind == "" {
		kind = "entry"
	}
	s := oneLine(kind) + ":"
	if e.Dir != "" {
		s += " " + oneLine(e.Dir)
	}
	if e.Text != "" {
		s += " " + truncated(e.Text, transcriptMaxBytes, len(e.Text))
	}
	if len(e.Raw) > 0 {
		s += " " + rawText(e.Raw)
	}
	return s
}

// dirLabel is the three-character direction column of a message or fault.
func dirLabel(dir string) string {
	switch dir {
	case "":
		return "---"
	case "c2s", "s2c":
		return dir
	}
	return oneLine(dir)
}

// messageText shows a message: its JSON compacted, or its non-JSON bytes
// quoted.
func messageText(e Entry) string {
	switch {
	case len(e.Raw) > 0:
		return rawText(e.Raw)
	case e.Text != "":
		return "(not JSON) " + quoted(e.Text)
	}
	return "(empty)"
}

// rawText compacts raw when it is JSON and cuts it after transcriptMaxBytes.
func rawText(raw []byte) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err == nil {
		return truncated(buf.String(), transcriptMaxBytes, len(raw))
	}
	return "(not JSON) " + quoted(string(raw))
}

// quoted shows bytes that are not JSON between double quotes, cut after
// transcriptMaxBytes.
func quoted(s string) string {
	return `"` + strings.ReplaceAll(truncated(s, transcriptMaxBytes, len(s)), `"`, `\"`) + `"`
}

// truncated makes s one line and, when it is longer than limit bytes, cuts it
// on a character boundary and appends "… (total bytes)".
func truncated(s string, limit, total int) string {
	if len(s) <= limit {
		return oneLine(s)
	}
	cut := limit
	// Do not split a multi-byte character: back up to its first byte.
	for cut > limit-utf8.UTFMax+1 && cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return oneLine(s[:cut]) + "… (" + strconv.Itoa(total) + " bytes)"
}

// oneLine escapes everything that could break a line or drive a terminal:
// control characters (\n, \r, \t, \x1b, C1 controls), U+FFFE/U+FFFF and bytes
// that are not UTF-8. Printable text, including non-ASCII, is kept.
func oneLine(s string) string {
	if isPlainLine(s) {
		return s
	}
	return escapeRunes(s, func(b *strings.Builder, r rune) bool {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x100 && unicode.IsControl(r):
			fmt.Fprintf(b, `\x%02x`, r)
		case unicode.IsControl(r) || r == 0xFFFE || r == 0xFFFF:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			return false
		}
		return true
	})
}

// escapeRunes rewrites s rune by rune: a byte that is not UTF-8 becomes
// \xNN, a rune that esc writes an escape for (true) becomes that escape,
// and every other rune is kept.
func escapeRunes(s string, esc func(b *strings.Builder, r rune) bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case esc(&b, r):
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// isPlainLine reports whether oneLine would return s unchanged.
func isPlainLine(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// orDash stands in for an empty name.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// xmlSafe makes s acceptable to any XML 1.0 parser: bytes that are not UTF-8
// and C0 control characters other than tab, newline and carriage return
// become \xNN; other characters outside the XML 1.0 range (U+FFFE, U+FFFF)
// become U+FFFD. Everything else is kept as it is.
func xmlSafe(s string) string {
	ok := true
	for _, r := range s {
		if r == utf8.RuneError || !xmlChar(r) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	return escapeRunes(s, func(b *strings.Builder, r rune) bool {
		switch {
		case xmlChar(r):
			return false
		case r < 0x20:
			fmt.Fprintf(b, `\x%02x`, r)
		default:
			b.WriteRune(utf8.RuneError)
		}
		return true
	})
}

// xmlChar reports whether r is a Char of XML 1.0 (production [2]).
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}
