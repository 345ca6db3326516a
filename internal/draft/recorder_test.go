package draft_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// recorderEnv, set in the test binary's environment, makes it serve the
// recording target on stdin/stdout instead of running the tests, and
// append the name of every tool it is asked to call to the file the
// variable names: the evidence of which tools a draft called.
const recorderEnv = "DRAFT_TEST_RECORDER_LOG"

// recorderTools are the recording target's tools, three pages of
// tools/list (2 per page): a read-only slow tool, a keyed idempotent
// mutation with a read-only counter and a lookup, a destructive keyed
// mutation, a tool with no annotations at all, and a plain write.
var recorderTools = [][]map[string]any{
	{
		{"name": "wait", "description": "Waits, sending progress after each step when the request carries a progress token.",
			"annotations": map[string]any{"readOnlyHint": true, "idempotentHint": true},
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"seconds": map[string]any{"type": "number", "description": "how long in total"},
				"steps":   map[string]any{"type": "integer", "minimum": 1, "maximum": 50},
			}}},
		{"name": "put_item", "description": "Stores an item once per idempotency key.",
			"annotations": map[string]any{"readOnlyHint": false, "idempotentHint": true, "destructiveHint": false},
			"inputSchema": map[string]any{"type": "object", "required": []string{"idempotency_key", "name"}, "properties": map[string]any{
				"idempotency_key": map[string]any{"type": "string"},
				"name":            map[string]any{"type": "string", "minLength": 1},
			}}},
	},
	{
		{"name": "item_stats", "description": "How many times put_item stored something, for a key or in all.",
			"annotations": map[string]any{"readOnlyHint": true},
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"idempotency_key": map[string]any{"type": "string"},
			}},
			"outputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"count": map[string]any{"type": "integer"},
			}}},
		{"name": "get_item", "description": "Finds the item stored under a key.",
			"annotations": map[string]any{"readOnlyHint": true},
			"inputSchema": map[string]any{"type": "object", "required": []string{"idempotency_key"}, "properties": map[string]any{
				"idempotency_key": map[string]any{"type": "string"},
			}}},
	},
	{
		{"name": "purge", "description": "Deletes every item.",
			"annotations": map[string]any{"readOnlyHint": false, "idempotentHint": true, "destructiveHint": true},
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"request_id": map[string]any{"type": "string"},
			}}},
		{"name": "sleepy", "description": "Sleeps delayMs, with progress. Not annotated at all.",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"delayMs": map[string]any{"type": "integer"},
			}}},
	},
	{
		{"name": "note", "description": "Appends a note.",
			"annotations": map[string]any{"readOnlyHint": false, "idempotentHint": false},
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}},
	},
}

// serveRecorder is the recording target: a small MCP server over stdio
// (2025 protocol versions, initialize only) whose every tools/call is
// appended to logPath before it is answered.
func serveRecorder(logPath string) int {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "recorder:", err)
		return 1
	}
	defer log.Close()
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		mu.Lock()
		defer mu.Unlock()
		b, _ := json.Marshal(v)
		out.Write(append(b, '\n'))
		out.Flush()
	}
	reply := func(id json.RawMessage, result any) {
		send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	}
	stored := map[string]int{}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string         `json:"protocolVersion"`
				Cursor          string         `json:"cursor"`
				Name            string         `json:"name"`
				Arguments       map[string]any `json:"arguments"`
				Meta            struct {
					ProgressToken any `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue // notifications, garbage
		}
		p := m.Params
		switch m.Method {
		case "initialize":
			v := p.ProtocolVersion
			if v != "2025-06-18" && v != "2025-11-25" {
				v = "2025-11-25"
			}
			reply(m.ID, map[string]any{"protocolVersion": v, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "recorder", "version": "1"}})
		case "ping":
			reply(m.ID, map[string]any{})
		case "tools/list":
			page := 0
			fmt.Sscanf(p.Cursor, "page-%d", &page)
			res := map[string]any{"tools": recorderTools[page]}
			if page+1 < len(recorderTools) {
				res["nextCursor"] = fmt.Sprintf("page-%d", page+1)
			}
			reply(m.ID, res)
		case "tools/call":
			fmt.Fprintln(log, p.Name)
			key, _ := p.Arguments["idempotency_key"].(string)
			var structured map[string]any
			switch p.Name {
			case "wait":
				secs, _ := p.Arguments["seconds"].(float64)
				steps, _ := p.Arguments["steps"].(float64)
				steps = max(steps, 1)
				for i := 1; i <= int(steps); i++ {
					time.Sleep(time.Duration(secs / steps * float64(time.Second)))
					if p.Meta.ProgressToken != nil {
						send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
							"params": map[string]any{"progressToken": p.Meta.ProgressToken, "progress": i, "total": int(steps)}})
					}
				}
			case "put_item":
				if _, ok := stored[key]; !ok {
					stored[key] = 1
				}
				structured = map[string]any{"stored": key}
			case "item_stats":
				n := stored[key]
				if key == "" {
					n = len(stored)
				}
				structured = map[string]any{"count": n}
			case "get_item":
				structured = map[string]any{"found": stored[key] > 0}
			}
			res := map[string]any{"content": []map[string]any{{"type": "text", "text": "ok"}}}
			if structured != nil {
				b, _ := json.Marshal(structured)
				res["structuredContent"] = structured
				res["content"] = []map[string]any{{"type": "text", "text": string(b)}}
			}
			reply(m.ID, res)
		default:
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "Method not found: " + m.Method}})
		}
	}
	return 0
}

// recorded reads the tools the recording target was asked to call.
func recorded(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}
