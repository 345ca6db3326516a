// Package httpheader parses the fixed HTTP headers a user gives on the
// command line (--header 'Name: value', repeatable), for every command
// that talks to an HTTP target. It validates names and values with
// golang.org/x/net/http/httpguts, the rules net/http itself applies.
package httpheader

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Parse reads one "Name: value" header. Surrounding blanks of the name and
// the value are dropped; the value may be empty ("Name:"). The name comes
// back in canonical form (http.CanonicalHeaderKey).
func Parse(s string) (name, value string, err error) {
	n, v, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", fmt.Errorf("header %q: want 'Name: value'", clip(s))
	}
	n, v = strings.TrimSpace(n), strings.TrimSpace(v)
	if n == "" {
		return "", "", fmt.Errorf("header %q: empty name", clip(s))
	}
	if !httpguts.ValidHeaderFieldName(n) {
		return "", "", fmt.Errorf("header %q: %q is not a valid header name", clip(s), n)
	}
	if !httpguts.ValidHeaderFieldValue(v) {
		// The value is not echoed: it may be a secret.
		return "", "", fmt.Errorf("header %s: the value holds a character a header value may not (a control character or a line break)", n)
	}
	return http.CanonicalHeaderKey(n), v, nil
}

// ParseAll reads repeated --header values into one http.Header: a name
// given twice keeps both values, in order. Nil when lines is empty.
func ParseAll(lines []string) (http.Header, error) {
	if len(lines) == 0 {
		return nil, nil
	}
	h := http.Header{}
	var errs []error
	for _, l := range lines {
		n, v, err := Parse(l)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		h.Add(n, v)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return h, nil
}

// clip shortens what an error message quotes of a malformed line: only
// what comes before the colon (or, with none, the first word), since the
// rest may be a secret.
func clip(s string) string {
	if n, _, ok := strings.Cut(s, ":"); ok {
		return n + ": …"
	}
	if w, _, ok := strings.Cut(strings.TrimSpace(s), " "); ok {
		return w + " …"
	}
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}
