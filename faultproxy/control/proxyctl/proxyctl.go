// Package proxyctl is the Go client of the fault proxy's control API
// (package faultproxy/control): add, update and remove rules of a running
// `mcp-conform proxy --control ADDR` while a real client talks through it,
// and read its transcript.
//
//	c := proxyctl.New("http://127.0.0.1:8474")
//	r, err := c.Add(ctx, faultproxy.RuleSpec{
//		Name:  "lose-call-response",
//		Match: faultproxy.MatchSpec{Dir: faultproxy.ServerToClient, RepliesTo: "tools/call"},
//		Times: 1,
//		Fault: faultproxy.FaultSpec{Drop: true},
//	})
//	...
//	entries, next, err := c.Transcript(ctx, 0)
package proxyctl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/faultproxy/control"
)

// Client talks to one control API. It is safe for concurrent use.
type Client struct {
	base string
	hc   *http.Client
}

// New returns a client of the API at base (e.g. "http://127.0.0.1:8474").
func New(base string) *Client {
	return &Client{base: strings.TrimRight(base, "/"), hc: &http.Client{Timeout: 30 * time.Second}}
}

// Error is a request the API refused: its HTTP status and message.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("control API: %d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
}

// IsNotFound reports whether err is the API's 404 (no such rule).
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// IsConflict reports whether err is the API's 409 (name taken).
func IsConflict(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusConflict
}

// do sends a request with an optional JSON body and decodes a JSON answer
// into out (when not nil).
func (c *Client) do(ctx context.Context, method, path string, in, out any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("proxyctl: encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("proxyctl: %s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("proxyctl: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var e control.Error
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(b))
		}
		return resp, &Error{Status: resp.StatusCode, Message: e.Error}
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return resp, fmt.Errorf("proxyctl: decode %s %s: %w", method, path, err)
		}
	}
	return resp, nil
}

func rulePath(name string) string { return "/rules/" + url.PathEscape(name) }

// Status returns the proxy's transport, upstream and rule seeds.
func (c *Client) Status(ctx context.Context) (control.Status, error) {
	var st control.Status
	_, err := c.do(ctx, http.MethodGet, "/status", nil, &st)
	return st, err
}

// Rules lists the installed rules in evaluation order, with counters.
func (c *Client) Rules(ctx context.Context) ([]control.Rule, error) {
	var l control.RuleList
	_, err := c.do(ctx, http.MethodGet, "/rules", nil, &l)
	return l.Rules, err
}

// Rule returns one installed rule (IsNotFound when there is none).
func (c *Client) Rule(ctx context.Context, name string) (control.Rule, error) {
	var r control.Rule
	_, err := c.do(ctx, http.MethodGet, rulePath(name), nil, &r)
	return r, err
}

// Add installs one more rule, evaluated after the others; a taken name is
// refused (IsConflict). The answer carries the rule's seed.
func (c *Client) Add(ctx context.Context, spec faultproxy.RuleSpec) (control.Rule, error) {
	var r control.Rule
	_, err := c.do(ctx, http.MethodPost, "/rules", spec, &r)
	return r, err
}

// Update replaces the rule named name in place, with fresh counters
// (IsNotFound when there is none). spec.Name may be empty.
func (c *Client) Update(ctx context.Context, name string, spec faultproxy.RuleSpec) (control.Rule, error) {
	var r control.Rule
	_, err := c.do(ctx, http.MethodPut, rulePath(name), spec, &r)
	return r, err
}

// Remove deletes the rule named name (IsNotFound when there is none).
func (c *Client) Remove(ctx context.Context, name string) error {
	_, err := c.do(ctx, http.MethodDelete, rulePath(name), nil, nil)
	return err
}

// SetAll replaces every rule at once: no message sees a mix of the old
// and the new set.
func (c *Client) SetAll(ctx context.Context, specs []faultproxy.RuleSpec) ([]control.Rule, error) {
	var l control.RuleList
	_, err := c.do(ctx, http.MethodPut, "/rules", struct {
		Rules []faultproxy.RuleSpec `json:"rules"`
	}{specs}, &l)
	return l.Rules, err
}

// Reset removes every rule and clears the transcript.
func (c *Client) Reset(ctx context.Context) error {
	_, err := c.do(ctx, http.MethodPost, "/reset", nil, nil)
	return err
}

// Entry is one transcript entry as the API writes it.
type Entry struct {
	Index  int                  `json:"i"`
	AtMs   float64              `json:"atMs"`
	Kind   faultproxy.EntryKind `json:"kind"`
	Dir    faultproxy.Direction `json:"dir,omitempty"`
	Seq    int64                `json:"seq,omitempty"`
	Stream string               `json:"stream,omitempty"`
	Rule   string               `json:"rule,omitempty"`
	Fault  string               `json:"fault,omitempty"`
	Text   string               `json:"text,omitempty"`
	// Msg is the message when it is JSON; Line holds it otherwise.
	Msg  json.RawMessage `json:"msg,omitempty"`
	Line *string         `json:"line,omitempty"`
}

// Raw returns the message bytes of a message entry.
func (e Entry) Raw() []byte {
	if e.Line != nil {
		return []byte(*e.Line)
	}
	return e.Msg
}

// Transcript returns the entries with index since or more, and the since
// value that continues after them.
func (c *Client) Transcript(ctx context.Context, since int) ([]Entry, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/transcript?since="+strconv.Itoa(since), nil)
	if err != nil {
		return nil, since, fmt.Errorf("proxyctl: transcript: %w", err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, since, fmt.Errorf("proxyctl: transcript: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, since, &Error{Status: resp.StatusCode, Message: strings.TrimSpace(string(b))}
	}
	next, err := strconv.Atoi(resp.Header.Get(control.NextHeader))
	if err != nil {
		return nil, since, fmt.Errorf("proxyctl: transcript: bad %s header %q", control.NextHeader, resp.Header.Get(control.NextHeader))
	}
	var out []Entry
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 128<<20)
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return out, since, fmt.Errorf("proxyctl: transcript line %d: %w", len(out)+1, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return out, since, fmt.Errorf("proxyctl: transcript: %w", err)
	}
	return out, next, nil
}
