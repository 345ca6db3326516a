package suites

// 2026-07-28 basic/index.mdx, "Per-response protocol fields": clientInfo
// and serverInfo are self-reported, "intended for display, logging, and
// debugging. Implementations SHOULD NOT use them to change the behavior of
// the client or server".
//
//	harness ──tools/list, _meta clientInfo A──▶ server ──▶ tools (names)
//	        ──tools/list, _meta clientInfo B──▶ server ──▶ the same names

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/reports"
)

var checkClientInfoNoEffect = register(&Check{
	ID:    "CLIENTINFO-NO-EFFECT",
	Title: "2026-07-28: the same request under two different clientInfos gets the same answer",
	How: "2026-07-28, stdio and Streamable HTTP. Sends server/discover and tools/list, each twice, exactly alike " +
		"(well-formed headers and _meta) but for _meta's io.modelcontextprotocol/clientInfo: once {name: mcp-conform}, once " +
		"{name: example-other-client, version 0.0.1}. Each pair of answers must agree: both results or both errors (with " +
		"one code); server/discover's results equal but for their _meta; tools/list's the same tool names in the same " +
		"order on the first page, with a nextCursor on both or neither. A difference WARNs: the server changed its " +
		"behaviour on a self-reported clientInfo (a security decision taken on it shows the same way: an answer refused " +
		"or narrowed for one client name).",
	Rules: map[string]Rule{v20260728: {Level: reports.Should, Spec: basicModern,
		Clause: "io.modelcontextprotocol/clientInfo and io.modelcontextprotocol/serverInfo are self-reported by the sender and are not verified by the protocol. They are intended for display, logging, and debugging. Implementations SHOULD NOT use them to change the behavior of the client or server, and SHOULD NOT rely on them for security decisions."}},
	Transports: []string{viaStdio, viaHTTP},
	Clauses:    []string{"basic#23"},
})

func registerClientInfo() {
	ginkgo.Describe("ROBUST clientInfo (2026-07-28)", ginkgo.Label("area:robust"), func() {
		define(checkClientInfoNoEffect, clientInfoNoEffect)
	})
}

// sameAnswerOf is what CLIENTINFO-NO-EFFECT compares of an answer to
// method: an error's code; server/discover's result but its _meta;
// tools/list's first page of tool names and whether a nextCursor follows.
func sameAnswerOf(method string, a rpcAnswer) string {
	if a.err != nil {
		return fmt.Sprintf("error %d", a.err.Code)
	}
	if a.result == nil {
		return "no answer"
	}
	if method != "tools/list" {
		var r map[string]json.RawMessage
		if json.Unmarshal(a.result, &r) != nil {
			return "result " + clip(a.result)
		}
		delete(r, "_meta")
		b, _ := json.Marshal(r) // map keys sorted: a canonical form
		return "result " + string(b)
	}
	var r struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		NextCursor *string `json:"nextCursor"`
	}
	_ = json.Unmarshal(a.result, &r)
	names := make([]string, 0, len(r.Tools))
	for _, t := range r.Tools {
		names = append(names, t.Name)
	}
	return fmt.Sprintf("tools [%s], nextCursor %v", strings.Join(names, " "), r.NextCursor != nil)
}

func clientInfoNoEffect(h *H) {
	v := h.Version()
	infos := []map[string]any{
		{"name": "mcp-conform", "version": "1.0.0"},
		{"name": "example-other-client", "version": "0.0.1"},
	}
	var bad, seen []string
	for _, method := range []string{"server/discover", "tools/list"} {
		var got []string
		for _, info := range infos {
			meta := modernMeta(v)
			meta[clients.MetaClientInfo] = info
			got = append(got, sameAnswerOf(method, rawModern(h, method, map[string]any{"_meta": meta}, v)))
		}
		if got[0] != got[1] {
			bad = append(bad, fmt.Sprintf("%s under clientInfo %v got %s; under clientInfo %v: %s",
				method, infos[0]["name"], clip([]byte(got[0])), infos[1]["name"], clip([]byte(got[1]))))
			continue
		}
		seen = append(seen, method+": "+clip([]byte(got[0])))
	}
	if len(bad) > 0 {
		h.Warnf("%s", strings.Join(bad, "; "))
	}
	h.Notef("the same answers under both clientInfos: %s", strings.Join(seen, "; "))
}
