package harness

import (
	"fmt"

	"github.com/mcp-conform/mcp-conform/reports"
)

// A remembered verdict is one a check reached on a fact of the target that
// later checks of the same run depend on too: a request the target refuses
// (tools/list answered with an error) decides every check that needs its
// answer. Those checks end at once with the same verdict, naming the check
// that saw it and carrying its transcript as their evidence, instead of
// each starting the target and asking again (and, against a server that
// answers badly, each waiting out its own timeout). The memory is per run
// (reset by Configure), per target and negotiated version, and per process:
// checks run in other processes (ginkgo -p, one child per target) ask
// again.

// remembered is a verdict kept for the later checks of a run.
type remembered struct {
	check  string
	status reports.Status
	reason string
	// transcript is the remembering check's, up to the moment it
	// remembered.
	transcript []reports.Entry
}

// rememberKey names a remembered fact of one target in one version.
type rememberKey struct {
	target  *Manifest
	version string
	key     string
}

var memory = map[rememberKey]remembered{}

// Remember records, for the later checks of this run against the same
// target in the same version, the verdict the check is about to give on
// the fact named key (say "tools/list refused"): status is reports.Fail
// (given as FailServer gives it: a MUST whatever the later check's level)
// or reports.Skip. The check's transcript so far is kept as the evidence.
// It does not end the check: the caller gives its verdict next.
func (h *H) Remember(key string, status reports.Status, reason string) {
	if status != reports.Fail && status != reports.Skip {
		h.Errorf("harness: Remember(%q) with status %s (only FAIL and SKIP are remembered)", key, status)
	}
	tr := h.plainTranscript()
	id := ""
	if h.check != nil {
		id = h.check.ID
	}
	cfgMu.Lock()
	defer cfgMu.Unlock()
	k := rememberKey{h.target, h.session.Version, key}
	if _, ok := memory[k]; !ok {
		memory[k] = remembered{check: id, status: status, reason: reason, transcript: tr}
	}
}

// Recall ends the check with the verdict an earlier check of the run
// remembered for key on this target and version, if one did: the reason
// says which check saw it, and the transcript is that check's, after a
// note. It returns when nothing was remembered.
func (h *H) Recall(key string) {
	cfgMu.Lock()
	r, ok := memory[rememberKey{h.target, h.session.Version, key}]
	cfgMu.Unlock()
	if !ok {
		return
	}
	h.startTranscript = append([]reports.Entry{{Kind: "note",
		Text: fmt.Sprintf("%s: the transcript of %s, which saw it; not asked again", key, r.check)}}, r.transcript...)
	reason := fmt.Sprintf("%s in %s of this run (not asked again): %s", key, r.check, r.reason)
	if r.status == reports.Skip {
		h.Skip(reason)
	}
	h.FailServer("%s", reason)
}

// plainTranscript is the check's transcript so far, without SCHEMA-VALID's
// walk (which judges each message once, when the check ends).
func (h *H) plainTranscript() []reports.Entry {
	out := append([]reports.Entry(nil), h.startTranscript...)
	n := len(h.conns) + len(h.hconns)
	i := 0
	add := func(entries []reports.Entry) {
		i++
		if n > 1 {
			out = append(out, reports.Entry{Kind: "note", Text: fmt.Sprintf("connection %d", i)})
		}
		out = append(out, entries...)
	}
	for _, c := range h.conns {
		var es []reports.Entry
		for _, e := range c.Transcript().Entries() {
			es = append(es, ReportEntry(e))
		}
		add(es)
	}
	for _, c := range h.hconns {
		var es []reports.Entry
		for _, e := range c.Proxy.Transcript().Entries() {
			es = append(es, ReportEntry(e))
		}
		add(es)
	}
	return out
}
