package sse

import (
	"strconv"
	"strings"
)

// Encode returns an event in canonical form, with LF line endings:
// "id: ID" when HasID is set or ID is not empty; "event: Type" when Type is
// not empty; "retry: N" when HasRetry is set or Retry is not zero (omitted
// when Retry is negative, which cannot be encoded); one "data: " line per
// line of Data when HasData is set or Data is not empty; then a blank line.
// When IsComment is set it returns instead ": " + each line of Comment, then
// a blank line.
//
// Data and Comment are split into lines at "\n", and also at "\r\n" and "\r",
// which the format cannot carry inside a line. CR and LF are removed from ID
// and Type, which cannot hold them. InnerComments and Raw are not encoded.
// An Event with nothing to encode yields a lone blank line, which a reader
// does not dispatch.
func Encode(e Event) []byte {
	if e.IsComment {
		b := make([]byte, 0, len(e.Comment)+8)
		b = appendLines(b, ": ", e.Comment)
		return append(b, '\n')
	}
	b := make([]byte, 0, len(e.Data)+len(e.ID)+len(e.Type)+40)
	if e.HasID || e.ID != "" {
		b = append(b, "id: "...)
		b = appendClean(b, e.ID)
		b = append(b, '\n')
	}
	if e.Type != "" {
		b = append(b, "event: "...)
		b = appendClean(b, e.Type)
		b = append(b, '\n')
	}
	if (e.HasRetry || e.Retry != 0) && e.Retry >= 0 {
		b = append(b, "retry: "...)
		b = strconv.AppendInt(b, int64(e.Retry), 10)
		b = append(b, '\n')
	}
	if e.HasData || e.Data != "" {
		b = appendLines(b, "data: ", e.Data)
	}
	return append(b, '\n')
}

// Heartbeat returns the bytes of a comment-only block: ": " + text + "\n\n"
// (a text with line breaks gives one comment line per line).
func Heartbeat(text string) []byte {
	return Encode(Event{IsComment: true, Comment: text})
}

// appendLines appends prefix+line+"\n" for each line of s, split at CRLF, LF
// and CR.
func appendLines(b []byte, prefix, s string) []byte {
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			b = append(b, prefix...)
			b = append(b, s...)
			return append(b, '\n')
		}
		b = append(b, prefix...)
		b = append(b, s[:i]...)
		b = append(b, '\n')
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
}

// appendClean appends s without its CR and LF bytes.
func appendClean(b []byte, s string) []byte {
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			return append(b, s...)
		}
		b = append(b, s[:i]...)
		s = s[i+1:]
	}
}
