package draft

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

// maxPages bounds how many pages of tools/list a draft reads: a server
// whose cursors never end is cut there, not followed forever.
const maxPages = 100

// ListTools reads every page of tools/list, following nextCursor. A
// cursor the server gives twice ends the listing with an error, as does a
// JSON-RPC error on any page.
func ListTools(ctx context.Context, s *Session) ([]Tool, error) {
	var all []json.RawMessage
	seen := map[string]bool{}
	cursor := ""
	for page := 1; ; page++ {
		if page > maxPages {
			return nil, fmt.Errorf("tools/list: still a nextCursor after %d pages", maxPages)
		}
		var params map[string]any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		m, err := s.Conn.Call(ctx, "tools/list", params)
		if err != nil {
			return nil, fmt.Errorf("tools/list page %d: %w%s", page, err, s.exitHint())
		}
		if m.Env.Kind != jsonrpc.Response {
			return nil, fmt.Errorf("tools/list page %d: %s", page, clip(m.Raw))
		}
		var res struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(m.Env.Result, &res); err != nil {
			return nil, fmt.Errorf("tools/list page %d: %w: %s", page, err, clip(m.Raw))
		}
		all = append(all, res.Tools...)
		if res.NextCursor == "" {
			break
		}
		if seen[res.NextCursor] {
			return nil, fmt.Errorf("tools/list page %d: nextCursor %q was given before (a loop)", page, res.NextCursor)
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
	return ParseTools(all)
}
