package suites

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
)

// idemConnect opens a connection to the target (a new server process when
// the target has a command) with rules installed first.
func idemConnect(h *H, rules ...faultproxy.Rule) *endpoint {
	if h.Target().Via() == protocol.TransportHTTP {
		c := h.ConnectHTTP(rules...)
		return httpEndpoint(h.Ctx(), c, c.W)
	}
	return stdioEndpoint(h.Connect(rules...))
}

// call calls tool and ends the check when the server does not answer.
func idemCall(h *H, e *endpoint, id jsonrpc.ID, tool string, args map[string]any, what string) ToolOutcome {
	o, err := e.CallTool(h.Ctx(), h.Cfg().CallTimeout, id, tool, args)
	if err != nil {
		h.FailServer("%s: %v", what, err)
	}
	return o
}

// mutate calls the mutation role with key; a refusal is an ERROR (the
// role does not work as declared, so nothing can be checked).
func mutate(h *H, e *endpoint, id jsonrpc.ID, key, what string) ToolOutcome {
	r := h.Role("mutation")
	o := idemCall(h, e, id, r.Tool, r.MutationArgs(key), what)
	if o.Failed() {
		h.Errorf("%s: the mutation role's call was refused, so the check cannot run: %s", what, clip(o.Msg.Raw))
	}
	return o
}

// executions reads the probe's count for key (or the total for "").
func executions(h *H, e *endpoint, key string) float64 {
	n, o, err := e.Count(h.Ctx(), h.Cfg().CallTimeout, h.Role("mutation"), key)
	if err != nil {
		if o.Msg.Raw == nil {
			h.FailServer("probe: %v", err)
		}
		h.Errorf("probe: %v", err)
	}
	return n
}

// resultBytes is what a replay must reproduce: the structured content as
// it was on the wire, or the text content when there is none.
func resultBytes(o ToolOutcome) []byte {
	if len(o.Structured) > 0 {
		return o.Structured
	}
	return []byte(o.Content)
}

// lostReply waits until the proxy applied fault (of the named rule) to a
// message, and returns that message as the server sent it: the response
// the client never saw, read from the transcript.
func lostReply(h *H, e *endpoint, rule, fault string) ToolOutcome {
	ctx, cancel := context.WithTimeout(h.Ctx(), h.Cfg().CallTimeout)
	defer cancel()
	o, err := faultedMessage(ctx, e.Tr, rule, fault)
	if err != nil {
		h.FailServer("the server never answered the mutation call (no %s fault applied by rule %s within %s)%s", fault, rule, h.Cfg().CallTimeout, e.ExitHint())
	}
	return o
}

// faultedMessage waits until the transcript records fault (of the named
// rule) and returns the message it acted on, as it reached the proxy.
func faultedMessage(ctx context.Context, tr *faultproxy.Transcript, rule, fault string) (ToolOutcome, error) {
	for {
		changed := tr.Changed()
		entries := tr.Entries()
		for _, f := range entries {
			if f.Kind != faultproxy.EntryFault || f.Rule != rule || f.Fault != fault {
				continue
			}
			for _, m := range entries {
				if m.Kind == faultproxy.EntryMessage && m.Dir == f.Dir && m.Seq == f.Seq && m.Stream == f.Stream {
					raw := toReportEntry(m).Raw
					return parseOutcome(clients.Message{Raw: raw, Env: jsonrpc.Parse(raw)}), nil
				}
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ToolOutcome{}, ctx.Err()
		}
	}
}

// changedArgs changes every argument of the role but the key: strings get
// a suffix, numbers one more, booleans flip. ok is false when there is
// nothing to change.
func changedArgs(r Role, key string) (map[string]any, bool) {
	args := r.MutationArgs(key)
	changed := false
	for k, v := range args {
		if k == r.Key {
			continue
		}
		switch v := v.(type) {
		case string:
			args[k], changed = v+" (changed by mcp-conform)", true
		case int:
			args[k], changed = v+1, true
		case float64:
			args[k], changed = v+1, true
		case bool:
			args[k], changed = !v, true
		}
	}
	return args, changed
}

// establishShared commits a keyed call through e1 and looks for it through
// e2: the probe must count it there too, and the lookup role, when
// declared, must find it. Racers that do not share state make the check
// FAIL when the manifest declares the ledger shared (mutation.shared), and
// SKIP otherwise: a race between two stores proves nothing, however alike
// their answers look.
func establishShared(h *H, e1, e2 *endpoint, how string) {
	r := h.Role("mutation")
	k := newKey("shared")
	b1, b2 := executions(h, e1, k), executions(h, e2, k)
	committed := mutate(h, e1, e1.NewID(), k, "the call that establishes shared state")
	d1, d2 := executions(h, e1, k)-b1, executions(h, e2, k)-b2
	if d1 != 1 {
		h.Errorf("the probe counted %v executions for one keyed call on the connection that made it (want 1): it does not observe the effect, so the race cannot be judged", d1)
	}
	var missing []string
	if d2 != d1 {
		missing = append(missing, fmt.Sprintf("the probe of the second connection counts %v executions for it (the first counts %v)", d2, d1))
	}
	if _, ok := h.Target().Roles["lookup"]; ok {
		if found, o := lookupFinds(h, e2, k); !found {
			missing = append(missing, fmt.Sprintf("the lookup role on the second connection does not find it (%s)", clip(resultBytes(o))))
		}
	}
	if len(missing) == 0 {
		h.Notef("%s share state: key %s committed through the first (%s) is seen through the second", how, k, clip(resultBytes(committed)))
		return
	}
	why := fmt.Sprintf("%s do not share state: key %s was committed through the first, but %s", how, k, strings.Join(missing, "; "))
	if r.Shared {
		h.Failf("%s — the manifest declares the ledger shared (mutation.shared: true), so a retry served by another instance would run the effect again", why)
	}
	h.Skip(why + " — a race between separate stores proves nothing (declare mutation.shared: true when every instance must share one ledger)")
}

// lookupFinds calls the lookup role for key; it finds nothing when it is
// refused or answers found: false.
func lookupFinds(h *H, e *endpoint, key string) (bool, ToolOutcome) {
	r, look := h.Role("mutation"), h.Role("lookup")
	o := idemCall(h, e, e.NewID(), look.Tool, map[string]any{r.Key: key}, "lookup by key")
	var obj map[string]any
	_ = json.Unmarshal(o.Structured, &obj)
	return !o.Failed() && obj["found"] != false, o
}

// sampleArgs builds arguments for a tool from its input schema: each
// required property gets a plain value of its type. ok is false when a
// required property has a type it cannot fill.
func sampleArgs(tool map[string]any) (map[string]any, bool) {
	s, _ := tool["inputSchema"].(map[string]any)
	props, _ := s["properties"].(map[string]any)
	req, _ := s["required"].([]any)
	args := map[string]any{}
	for _, name := range req {
		n, _ := name.(string)
		p, _ := props[n].(map[string]any)
		switch p["type"] {
		case "string":
			v := "mcp-conform annotation check"
			if ml, ok := p["minLength"].(float64); ok && int(ml) > len(v) {
				v += strings.Repeat("x", int(ml)-len(v))
			}
			args[n] = v
		case "integer", "number":
			v := 1.0
			if m, ok := p["minimum"].(float64); ok {
				v = m
			}
			args[n] = v
		case "boolean":
			args[n] = false
		default:
			return nil, false
		}
	}
	return args, true
}

func compactArgs(args map[string]any) string {
	b, _ := json.Marshal(args)
	return string(b)
}
