package reports

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Redacted replaces a secret wherever the harness records or writes it.
const Redacted = "[redacted]"

// minSecret is the shortest value a Redactor scrubs from free text: a
// shorter one ("1", "yes") would wipe ordinary words out of a report. The
// headers that carry such a value are still redacted by name.
const minSecret = 8

// sensitiveWords mark a header name whose values are credentials
// (Authorization, Proxy-Authorization, Cookie, X-Api-Key, X-Auth-Token,
// X-Client-Secret, ...).
var sensitiveWords = []string{"auth", "cookie", "token", "secret", "password", "passwd", "credential", "api-key", "apikey", "x-key", "signature"}

// publicHeaders are header names that hold one of those words but no
// secret: the challenge of a 401 names where to get a token, and is the
// evidence of the auth checks.
var publicHeaders = map[string]bool{"Www-Authenticate": true, "Authentication-Info": true}

// SensitiveHeader reports whether a header's values are secrets by its
// name alone: Authorization, Cookie, Set-Cookie, Proxy-Authorization, and any
// name holding auth, token, secret, password, credential, api-key or
// signature (X-Api-Key, X-Auth-Token, ...), but not WWW-Authenticate.
func SensitiveHeader(name string) bool {
	c := http.CanonicalHeaderKey(name)
	if publicHeaders[c] {
		return false
	}
	l := strings.ToLower(c)
	for _, w := range sensitiveWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// Redactor hides secrets: header values by name (SensitiveHeader and the
// names it was told), and known secret values (the run's --header values,
// OAuth tokens and client secret) wherever they appear in text. It is safe
// for concurrent use; the zero value is ready and hides what
// SensitiveHeader names.
type Redactor struct {
	mu      sync.RWMutex
	names   map[string]bool
	secrets []string
}

// Secrets is the process's redactor: every secret the run holds is added to
// it, and every report is scrubbed with it before it is written.
var Secrets = &Redactor{}

// AddHeader marks header names whose values are secrets (the --header
// names: their values are credentials whatever the name).
func (r *Redactor) AddHeader(names ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.names == nil {
		r.names = map[string]bool{}
	}
	for _, n := range names {
		r.names[http.CanonicalHeaderKey(n)] = true
	}
}

// Add records secret values to scrub from text. A value "Scheme credential"
// (Bearer, Basic, ...) also hides the credential alone; values shorter than
// 8 bytes are not scrubbed from text (only by header name).
func (r *Redactor) Add(values ...string) {
	var add []string
	for _, v := range values {
		v = strings.TrimSpace(v)
		cands := []string{v}
		if _, cred, ok := strings.Cut(v, " "); ok {
			cands = append(cands, strings.TrimSpace(cred))
		}
		for _, c := range cands {
			if len(c) < minSecret {
				continue
			}
			add = append(add, c)
			// As a JSON string holds it (escapes of " \ < > &).
			if b, err := json.Marshal(c); err == nil {
				if q := string(b[1 : len(b)-1]); q != c {
					add = append(add, q)
				}
			}
		}
	}
	if len(add) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range add {
		if !slices.Contains(r.secrets, a) {
			r.secrets = append(r.secrets, a)
		}
	}
	// Longest first, so that a secret holding another is hidden whole.
	slices.SortFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
}

// Sensitive reports whether header name's values are hidden.
func (r *Redactor) Sensitive(name string) bool {
	if SensitiveHeader(name) {
		return true
	}
	if r == nil {
		return false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.names[http.CanonicalHeaderKey(name)]
}

// String returns s with every known secret replaced by Redacted.
func (r *Redactor) String(s string) string {
	if r == nil || s == "" {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, sec := range r.secrets {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, Redacted)
		}
	}
	return s
}

// Header returns a copy of h with the values of sensitive headers replaced
// by Redacted and known secrets scrubbed from the others.
func (r *Redactor) Header(h map[string][]string) map[string][]string {
	if h == nil {
		return nil
	}
	out := make(map[string][]string, len(h))
	for k, vs := range h {
		if r.Sensitive(k) {
			out[k] = []string{Redacted}
			continue
		}
		cp := make([]string, len(vs))
		for i, v := range vs {
			cp[i] = r.String(v)
		}
		out[k] = cp
	}
	return out
}

// Entry scrubs one transcript entry in place: its text, its raw message
// (still JSON afterwards: a secret inside a JSON string becomes
// "[redacted]" there) and its HTTP headers.
func (r *Redactor) Entry(e *Entry) {
	e.Text = r.String(e.Text)
	if len(e.Raw) > 0 {
		if s := r.String(string(e.Raw)); s != string(e.Raw) {
			if json.Valid([]byte(s)) {
				e.Raw = json.RawMessage(s)
			} else {
				e.Raw, e.Text = nil, s
			}
		}
	}
	if e.HTTP != nil {
		h := *e.HTTP
		h.Header = r.Header(h.Header)
		h.Path = r.String(h.Path)
		e.HTTP = &h
	}
}

// Check scrubs one check result in place: reason, clause, transcript and
// the reasons of its runs.
func (r *Redactor) Check(c *Check) {
	c.Reason = r.String(c.Reason)
	c.Expected = r.String(c.Expected)
	for i := range c.Transcript {
		r.Entry(&c.Transcript[i])
	}
	for i := range c.Runs {
		c.Runs[i].Reason = r.String(c.Runs[i].Reason)
	}
}

// Report scrubs a whole report in place: every check, the target's URL and
// command, the refusal reasons and the retry-class evidence.
func (r *Redactor) Report(rep *Report) {
	if rep == nil {
		return
	}
	rep.Target.Name = r.String(rep.Target.Name)
	rep.Target.URL = r.String(rep.Target.URL)
	rep.Target.Command = r.String(rep.Target.Command)
	for i := range rep.Target.Versions {
		rep.Target.Versions[i].Reason = r.String(rep.Target.Versions[i].Reason)
	}
	for i := range rep.Checks {
		r.Check(&rep.Checks[i])
	}
	for i := range rep.RetryClasses {
		for j, ev := range rep.RetryClasses[i].Evidence {
			rep.RetryClasses[i].Evidence[j] = r.String(ev)
		}
	}
}
