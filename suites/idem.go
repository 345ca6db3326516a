package suites

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/faultproxy"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

// idemRule is a clause of the contract a manifest declares with a keyed
// mutation role (mutation.key: the argument that makes a retry safe), in
// the words of the seed it comes from, the same in every protocol version.
// MCP itself leaves idempotency to the application: the target asked to be
// held to this contract by declaring the key.
func idemRule(level reports.Level, spec, clause string) map[string]Rule {
	return sameRule(Rule{Level: level, Spec: spec, Source: reports.SourceManifest,
		Clause: "The contract the manifest declares with a keyed mutation role (mutation.key), in the seed's words: " + clause}, allVersions...)
}

var checkIdemNaive = register(&Check{
	ID:    "IDEM-NAIVE",
	Title: "baseline: a naive retry (new id, no key or a fresh key) after a lost response, and how often the effect ran",
	How: "Drops the response to a call of the mutation tool, then retries the way a naive client does: a new JSON-RPC id and no " +
		"operation key (a fresh key when the tool requires one). Reports how many times the probe says the effect ran. " +
		"Informational: a JSON-RPC id only correlates messages, so the server cannot know the retry is the same intent; " +
		"the check never fails the server for it (it PASSes with the observation in its reason).",
	Rules: idemRule(reports.Should, seedLesson,
		"New RPC id treated as deduplication: a charge, deployment or deletion runs twice — add a durable application idempotency key. Informational: it shows the target's baseline"),
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"mutation"},
})

var checkIdemLost = register(&Check{
	ID:    "IDEM-LOST-RESPONSE",
	Title: "after a lost response, a retry with a new id and the same key returns the same result and the effect runs once",
	How: "The proxy drops the server's response to a keyed call of the mutation tool (the server committed and sent it). The " +
		"client retries with a new JSON-RPC id, the same operation key and identical arguments: the result must be the one " +
		"the lost response carried (byte for byte, from the transcript) and the probe must count one execution more than it " +
		"did before the first call (it may count per key or every execution, and the store may hold earlier work).",
	Rules: idemRule(reports.Must, seedSidecar,
		"Reuse the same operation key for the same intended action: a retry finds the original claim and returns the existing ticket (T-0001) instead of creating another (T-0002)"),
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"mutation"},
})

var checkIdemKeyReuse = register(&Check{
	ID:    "IDEM-KEY-REUSE",
	Title: "the same key with different arguments is rejected, runs nothing, and leaves the stored result unchanged",
	How: "Calls the mutation tool with a key, then with the same key and changed arguments: the second call must be refused " +
		"(a JSON-RPC error or an isError result), the probe must show no new execution, and a replay with the first " +
		"arguments must still return the first result.",
	Rules: idemRule(reports.Must, seedSidecar,
		"If the same key is already bound to a different input the call must be rejected (OperationKeyConflict): returning an earlier result for changed input hides a contract error; store and compare an argument fingerprint"),
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"mutation"},
})

var checkIdemConcurrent = register(&Check{
	ID:    "IDEM-CONCURRENT",
	Title: "two connections racing one key produce one execution, and both callers see the committed result",
	How: "Opens two independent connections (stdio: two server processes; HTTP: two sessions) and first establishes that they " +
		"share state: a keyed call committed through the first must show in the second's probe and, when declared, be found " +
		"by its lookup. When it does not, the check FAILs if the manifest declares the ledger shared (mutation.shared: true), " +
		"else SKIPs: look-alike answers of two separate stores prove nothing. Then it sends the same keyed call on each and holds " +
		"both in the proxy until both have arrived (a barrier), then releases them together. The probe must count one " +
		"execution more than before the race and both answers must carry the same result.",
	Rules: idemRule(reports.Must, seedSidecar,
		"The claim must be saved by one atomic database operation: two workers must never both see an empty record and both become the owner; an in-process lock is not enough when another server instance may take the retry"),
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"mutation"},
})

var checkIdemRestart = register(&Check{
	ID:    "IDEM-RESTART",
	Title: "a server killed between its commit and its response returns the stored result after a restart, and reconciles by key",
	How: "SIGKILLs the server when its response to a keyed call of the mutation tool reaches the proxy (the effect is " +
		"committed, the client never gets the answer) and starts the server again. Before any retry it reconciles: the " +
		"probe must still count the execution committed before the kill (it must not have gone back below its reading before " +
		"the call) and the lookup role, when declared, must find the operation by its key. Then it retries with a new id and " +
		"the same key: the stored result must come back and the probe must count no new execution. Needs restart: true " +
		"(HTTP: a command to restart).",
	Rules: idemRule(reports.Must, seedSidecar,
		"Remember enough state to recover after a crash; an in-memory ledger forgets prior commits on restart (use shared durable storage); reconcile a lost response by key against the system that owns the result before any retry"),
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"mutation"},
})

var checkIdemReplay = register(&Check{
	ID:    "IDEM-REPLAY-IDENTICAL",
	Title: "every replay of a keyed call returns the same structured content, byte for byte",
	How:   "Calls the mutation tool with a key, then replays the call twice (new ids, same key and arguments): each replay's structuredContent must equal the first, byte for byte.",
	Rules: idemRule(reports.Must, seedLesson,
		"Stored mutable result returned directly: caller mutation corrupts later replays — serialize committed results and return defensive copies"),
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"mutation"},
})

var checkIdemAnnotation = register(&Check{
	ID:    "IDEM-ANNOTATION",
	Title: "a tool annotated idempotentHint: true does not run its effect again when called twice with the same arguments",
	How: "For every tool tools/list annotates idempotentHint: true (and not readOnlyHint: true), calls it twice with the same " +
		"arguments (the mutation role's, with one key; otherwise arguments built from its input schema) and reads the " +
		"probe's execution count (per key, or the total) after each call: the second call must add nothing. WARN: " +
		"annotations are hints, and the report says when they lie.",
	Rules: sameRule(Rule{Level: reports.Should, Spec: toolsPage, Source: reports.SourceReading,
		Clause: "idempotentHint: if true, calling the tool repeatedly with the same arguments will have no additional effect on its environment (ToolAnnotations); clients MUST consider tool annotations to be untrusted unless they come from trusted servers — mcp-conform's reading: an annotation the server gives is a hint it should not contradict (WARN)."},
		allVersions...),
	Transports: []string{viaStdio, viaHTTP},
	Roles:      []string{"mutation"},
})

func registerIdem() {
	ginkgo.Describe("IDEM", ginkgo.Label("area:idem"), func() {
		define(checkIdemNaive, idemNaive)
		define(checkIdemLost, idemLostResponse)
		define(checkIdemKeyReuse, idemKeyReuse)
		define(checkIdemConcurrent, idemConcurrent)
		define(checkIdemRestart, idemRestart)
		define(checkIdemReplay, idemReplay)
		define(checkIdemAnnotation, idemAnnotation)
	})
}

// Fixed request ids the IDEM checks' fault rules match.
var (
	idFirst = jsonrpc.StringID("idem-first")
	idRace  = jsonrpc.StringID("idem-race")
)

func idemNaive(h *H) {
	r := h.Role("mutation")
	e := idemConnect(h, faultproxy.Rule{Name: "lose-response", Match: faultproxy.Match{Dir: faultproxy.ServerToClient, ID: idFirst}, Fault: faultproxy.Drop{}})
	tools, err := e.ListTools(h.Ctx(), h.Cfg().OpTimeout)
	if err != nil {
		h.FailServer("%v", err)
	}
	tool, _ := findTool(tools, r.Tool)
	required := false
	if s, ok := tool["inputSchema"].(map[string]any); ok {
		req, _ := s["required"].([]any)
		required = slices.Contains(req, any(r.Key))
	}
	key1 := newKey("naive-1")
	// Every count is a difference of two readings: the probe may count per
	// key or every execution, and the store may hold earlier work.
	before1 := executions(h, e, key1)
	if _, err := e.StartTool(h.Ctx(), idFirst, r.Tool, r.MutationArgs(key1)); err != nil {
		h.FailServer("%v", err)
	}
	first := lostReply(h, e, "lose-response", "drop")
	if first.Failed() {
		h.Errorf("the mutation role's call was refused, so the check cannot run: %s", clip(first.Msg.Raw))
	}
	ran1 := executions(h, e, key1) - before1
	args := r.MutationArgs(newKey("naive-2"))
	how := "a new id and a fresh " + r.Key + ", which the tool requires"
	retryKey := args[r.Key].(string)
	if !required {
		delete(args, r.Key)
		how = "a new id and no key"
		retryKey = ""
		if _, _, err := e.Count(h.Ctx(), h.Cfg().CallTimeout, r, ""); err != nil {
			h.Skip("the probe gives no total without a key, so a keyless retry cannot be counted: " + err.Error())
		}
	}
	before2 := executions(h, e, retryKey)
	retry := idemCall(h, e, e.NewID(), r.Tool, args, "naive retry")
	if retry.Failed() {
		h.Notef("baseline: the naive retry (%s) was refused: %s", how, clip(retry.Msg.Raw))
		return
	}
	ran := ran1 + executions(h, e, retryKey) - before2
	if ran > 1 {
		h.Notef("baseline: after a lost response, a naive retry (%s) ran the effect again: %v executions for one intent — clients must retry with the same key", how, ran)
		return
	}
	h.Notef("baseline: after a lost response, a naive retry (%s) did not run the effect again (%v execution)", how, ran)
}

func idemLostResponse(h *H) {
	r := h.Role("mutation")
	e := idemConnect(h, faultproxy.Rule{Name: "lose-response", Match: faultproxy.Match{Dir: faultproxy.ServerToClient, ID: idFirst}, Fault: faultproxy.Drop{}})
	key := newKey("lost")
	// The probe is read before the first call: it may count per key or
	// every execution, and the store may hold earlier work. The check
	// judges what changed.
	before := executions(h, e, key)
	if _, err := e.StartTool(h.Ctx(), idFirst, r.Tool, r.MutationArgs(key)); err != nil {
		h.FailServer("%v", err)
	}
	first := lostReply(h, e, "lose-response", "drop")
	if first.Failed() {
		h.Errorf("the mutation role's call was refused, so the check cannot run: %s", clip(first.Msg.Raw))
	}
	retry := idemCall(h, e, e.NewID(), r.Tool, r.MutationArgs(key), "retry after the lost response")
	if retry.Failed() {
		h.Failf("the retry with the same key after a lost response was refused (the effect had committed): %s", string(retry.Msg.Raw))
	}
	if n := executions(h, e, key) - before; n != 1 {
		h.Failf("after a lost response and one retry with the same key %s, the probe counts %v executions since before the first call (want 1): the effect ran again; retry answered %s", key, n, string(retry.Msg.Raw))
	}
	if a, b := resultBytes(first), resultBytes(retry); !bytes.Equal(a, b) {
		h.Failf("the retry returned %s, but the lost response carried %s: not the same result", clip(b), clip(a))
	}
	h.Notef("1 execution; the retry returned the lost response's result %s", clip(resultBytes(retry)))
	h.RecordIdem(r.Tool, "IDEM-LOST-RESPONSE: a retry after a lost response returned the stored result, 1 execution")
}

func idemKeyReuse(h *H) {
	r := h.Role("mutation")
	other, ok := changedArgs(r, "")
	if !ok {
		h.Skip("the mutation role's arguments have nothing but the key to change (give it a string, number or boolean argument)")
	}
	e := idemConnect(h)
	key := newKey("reuse")
	first := mutate(h, e, e.NewID(), key, "first call")
	n1 := executions(h, e, key)
	other[r.Key] = key
	reuse := idemCall(h, e, e.NewID(), r.Tool, other, "same key, other arguments")
	if !reuse.Failed() {
		h.Failf("the same key %s with different arguments was accepted: %s (want an error or an isError result)", key, string(reuse.Msg.Raw))
	}
	if n2 := executions(h, e, key); n2 != n1 {
		h.Failf("the refused call with a reused key still ran the effect: executions %v → %v", n1, n2)
	}
	replay := idemCall(h, e, e.NewID(), r.Tool, r.MutationArgs(key), "replay with the first arguments")
	if replay.Failed() {
		h.Failf("after the refused reuse, a replay with the first arguments was refused: %s", string(replay.Msg.Raw))
	}
	if a, b := resultBytes(first), resultBytes(replay); !bytes.Equal(a, b) {
		h.Failf("after the refused reuse the stored result changed: the replay returned %s, the first call %s", clip(b), clip(a))
	}
	h.RecordIdem(r.Tool, "IDEM-KEY-REUSE: the same key with other arguments was refused")
}

func idemConcurrent(h *H) {
	r := h.Role("mutation")
	barrier := faultproxy.NewBarrier(2, h.Cfg().OpTimeout)
	rule := faultproxy.Rule{Name: "race", Match: faultproxy.Match{Dir: faultproxy.ClientToServer, ID: idRace}, Fault: barrier}
	var e1, e2 *endpoint
	how := "two server processes"
	if h.Target().Via() == protocol.TransportHTTP {
		c := h.ConnectHTTP(rule)
		e1, e2 = httpEndpoint(h.Ctx(), c, c.W), httpEndpoint(h.Ctx(), c, h.SecondSession(c))
		how = "two HTTP sessions"
	} else {
		e1, e2 = idemConnect(h, rule), idemConnect(h, rule)
	}
	// Two racers that share nothing both "win" and answer look-alike
	// results: first establish that what one commits, the other sees.
	establishShared(h, e1, e2, how)
	key := newKey("race")
	before := executions(h, e1, key)
	// Each call is sent and awaited on its own goroutine: an HTTP request
	// is not sent back until the barrier releases it, and both must reach
	// the barrier.
	type answer struct {
		o   ToolOutcome
		err error
	}
	answers := [2]chan answer{make(chan answer, 1), make(chan answer, 1)}
	for i, e := range []*endpoint{e1, e2} {
		go func() {
			w, err := e.StartTool(h.Ctx(), idRace, r.Tool, r.MutationArgs(key))
			if err != nil {
				answers[i] <- answer{err: err}
				return
			}
			o, err := e.Await(h.Ctx(), h.Cfg().CallTimeout, w)
			answers[i] <- answer{o, err}
		}()
	}
	a1, a2 := <-answers[0], <-answers[1]
	if a1.err != nil || a2.err != nil {
		h.FailServer("a racing call got no answer: %v %v", a1.err, a2.err)
	}
	o1, o2 := a1.o, a2.o
	if barrier.Arrived() < 2 {
		h.Errorf("the proxy's barrier saw %d of the 2 racing calls", barrier.Arrived())
	}
	n := executions(h, e1, key) - before
	if n != 1 {
		h.Failf("two calls with key %s from %s sharing one ledger, released together by the proxy's barrier, ran the effect %v times (want 1); answers %s and %s",
			key, how, n, string(o1.Msg.Raw), string(o2.Msg.Raw))
	}
	// A caller told "in progress" (fail closed) must get the committed
	// result when it retries with the same key.
	for i, o := range []*ToolOutcome{&o1, &o2} {
		if o.Failed() {
			e := []*endpoint{e1, e2}[i]
			h.Notef("caller %d was refused while the other held the key (%s); it retried with the same key", i+1, clip(o.Msg.Raw))
			*o = idemCall(h, e, e.NewID(), r.Tool, r.MutationArgs(key), "retry of the refused racing call")
			if o.Failed() {
				h.Failf("caller %d never saw the committed result: its retry with the same key was refused too: %s", i+1, string(o.Msg.Raw))
			}
		}
	}
	if a, b := resultBytes(o1), resultBytes(o2); !bytes.Equal(a, b) {
		h.Failf("the two racing callers saw different results: %s and %s", clip(a), clip(b))
	}
	h.Notef("%s released together: 1 execution, both saw %s", how, clip(resultBytes(o1)))
	h.RecordIdem(r.Tool, "IDEM-CONCURRENT: two racing connections, 1 execution")
}

func idemRestart(h *H) {
	r := h.Role("mutation")
	switch {
	case !h.Target().Restart:
		h.Skip("the target manifest does not declare restart: true")
	case len(h.Target().Command) == 0:
		h.Skip("the target has no command to start it again (a --url target)")
	}
	e1 := idemConnect(h, faultproxy.Rule{Name: "kill-on-response", Match: faultproxy.Match{Dir: faultproxy.ServerToClient, ID: idFirst}, Fault: faultproxy.Crash{}})
	key := newKey("restart")
	// Read before the first call: the probe may count per key or every
	// execution, and the store may hold earlier work.
	before := executions(h, e1, key)
	if _, err := e1.StartTool(h.Ctx(), idFirst, r.Tool, r.MutationArgs(key)); err != nil {
		h.FailServer("%v", err)
	}
	first := lostReply(h, e1, "kill-on-response", "crash")
	if first.Failed() {
		h.Errorf("the mutation role's call was refused, so the check cannot run: %s", clip(first.Msg.Raw))
	}
	if e1.Exited != nil {
		select {
		case <-e1.Exited:
		case <-time.After(h.Cfg().OpTimeout):
			h.Errorf("the server did not exit within %s of SIGKILL", h.Cfg().OpTimeout)
		}
	}
	e2 := idemConnect(h)
	// Reconcile before retrying: the restarted server must still know the
	// operation committed before the kill. A retry first would let a
	// server that forgot everything execute again and find the record it
	// just made.
	restarted := executions(h, e2, key)
	if restarted-before < 1 {
		h.Failf("after a SIGKILL between commit and response and a restart, the probe counts %v executions (%v before the call): the execution committed before the kill was forgotten (the ledger is not durable)", restarted, before)
	}
	if _, ok := h.Target().Roles["lookup"]; ok {
		found, o := lookupFinds(h, e2, key)
		if !found {
			h.Failf("reconciliation by key failed after the restart, before any retry: lookup %s answered %s (the operation committed before the kill is unknown)", h.Role("lookup").Tool, string(o.Msg.Raw))
		}
		h.Notef("before the retry, lookup by key found it: %s", clip(resultBytes(o)))
	}
	retry := idemCall(h, e2, e2.NewID(), r.Tool, r.MutationArgs(key), "retry after the restart")
	if retry.Failed() {
		h.Failf("after the restart, the retry with the same key was refused (the effect had committed before the kill): %s", string(retry.Msg.Raw))
	}
	if n := executions(h, e2, key); n != restarted || n-before != 1 {
		h.Failf("after a SIGKILL between commit and response and a restart, the retry with key %s ran the effect again: the probe counts %v before the call, %v after the restart, %v after the retry (want 1 execution in all); retry answered %s", key, before, restarted, n, string(retry.Msg.Raw))
	}
	if a, b := resultBytes(first), resultBytes(retry); !bytes.Equal(a, b) {
		h.Failf("after the restart the retry returned %s, but the response lost with the killed server carried %s", clip(b), clip(a))
	}
	h.RecordIdem(r.Tool, "IDEM-RESTART: the stored result survived a SIGKILL between commit and response")
}

func idemReplay(h *H) {
	r := h.Role("mutation")
	e := idemConnect(h)
	key := newKey("replay")
	first := mutate(h, e, e.NewID(), key, "first call")
	for i := 1; i <= 2; i++ {
		o := idemCall(h, e, e.NewID(), r.Tool, r.MutationArgs(key), fmt.Sprintf("replay %d", i))
		if o.Failed() {
			h.Failf("replay %d with the same key and arguments was refused: %s", i, string(o.Msg.Raw))
		}
		if a, b := resultBytes(first), resultBytes(o); !bytes.Equal(a, b) {
			h.Failf("replay %d returned %s, the first call %s: replays must be byte-identical", i, clip(b), clip(a))
		}
	}
	h.RecordIdem(r.Tool, "IDEM-REPLAY-IDENTICAL: replays byte-identical")
}

func idemAnnotation(h *H) {
	r := h.Role("mutation")
	e := idemConnect(h)
	tools, err := e.ListTools(h.Ctx(), h.Cfg().OpTimeout)
	if err != nil {
		h.FailServer("%v", err)
	}
	var lies, checked []string
	for _, t := range tools {
		name, _ := t["name"].(string)
		idem, _ := annotation(t, "idempotentHint")
		ro, _ := annotation(t, "readOnlyHint")
		if !idem || ro {
			continue
		}
		var args map[string]any
		key := ""
		if name == r.Tool {
			key = newKey("annotation")
			args = r.MutationArgs(key)
		} else {
			var ok bool
			if args, ok = sampleArgs(t); !ok {
				h.Notef("%s: cannot build arguments from its input schema; not checked", name)
				continue
			}
			if _, _, err := e.Count(h.Ctx(), h.Cfg().CallTimeout, r, ""); err != nil {
				h.Notef("%s: the probe gives no total without a key, so its effects cannot be observed; not checked", name)
				continue
			}
		}
		var counts [3]float64
		counts[0] = executions(h, e, key)
		for i := 1; i <= 2; i++ {
			o := idemCall(h, e, e.NewID(), name, args, fmt.Sprintf("%s call %d", name, i))
			if o.Failed() {
				h.Notef("%s: call %d was refused (%s); not checked", name, i, clip(o.Msg.Raw))
				counts[2] = counts[1]
				break
			}
			counts[i] = executions(h, e, key)
		}
		if counts[2] > counts[1] {
			lies = append(lies, fmt.Sprintf("tools/list annotates %s idempotentHint: true, but a second call with the same arguments %s ran its effect again (executions %v → %v → %v)",
				name, compactArgs(args), counts[0], counts[1], counts[2]))
			h.RecordAnnotation(name, fmt.Sprintf("IDEM-ANNOTATION: idempotentHint true, but a second identical call ran again (%v → %v)", counts[1], counts[2]))
			continue
		}
		checked = append(checked, name)
		h.RecordAnnotation(name, "IDEM-ANNOTATION: idempotentHint true confirmed (a second identical call added no execution)")
	}
	if len(lies) > 0 {
		h.Failf("%s", strings.Join(lies, "; "))
	}
	if len(checked) == 0 {
		h.Notef("no tool annotated idempotentHint: true could be checked")
		return
	}
	h.Notef("idempotentHint: true confirmed for %s", strings.Join(checked, ", "))
}
