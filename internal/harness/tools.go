package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcp-conform/mcp-conform/clients"
)

// ToolInfo is one tool a target exposes, as tools/list describes it.
type ToolInfo struct {
	Name  string `json:"name"`
	Title string `json:"title,omitempty"`
	// Annotations are the tool's hints; nil when the tool gave none, in
	// which case the specification's defaults apply (readOnlyHint false,
	// destructiveHint true, idempotentHint false).
	Annotations *ToolAnnotations `json:"annotations,omitempty"`
	// Arguments lists the properties of the tool's input schema.
	Arguments []string `json:"arguments,omitempty"`
}

// ToolAnnotations are the hints of ToolAnnotations in the schema; a nil
// field was absent.
type ToolAnnotations struct {
	ReadOnlyHint    *bool `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
}

// TargetTools starts the target (or connects to its URL), negotiates a
// version as a run would, lists its tools (following nextCursor, at most 50
// pages) and closes the connection. It returns the tools and the
// negotiated protocol version.
func TargetTools(ctx context.Context, cfg *Config, target *Manifest) ([]ToolInfo, string, error) {
	cfg = cfg.WithDefaults()
	sctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	c, err := transportOf(target).Dial(sctx, cfg, target, clients.Session{})
	if err != nil {
		return nil, "", fmt.Errorf("start %s: %w", target.Name, err)
	}
	defer c.Close()
	w := c.W
	call := func(ctx context.Context, p map[string]any) (clients.Message, error) {
		return w.Call(ctx, "tools/list", p)
	}
	version := w.Session().Version
	var tools []ToolInfo
	cursor := ""
	for page := 0; page < 50; page++ {
		var params map[string]any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		octx, ocancel := context.WithTimeout(ctx, cfg.OpTimeout)
		m, err := call(octx, params)
		ocancel()
		if err != nil {
			return nil, version, fmt.Errorf("tools/list: %w", err)
		}
		var resp struct {
			Result *struct {
				Tools []struct {
					Name        string           `json:"name"`
					Title       string           `json:"title"`
					Annotations *ToolAnnotations `json:"annotations"`
					InputSchema struct {
						Properties map[string]json.RawMessage `json:"properties"`
					} `json:"inputSchema"`
				} `json:"tools"`
				NextCursor string `json:"nextCursor"`
			} `json:"result"`
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(m.Raw, &resp); err != nil {
			return nil, version, fmt.Errorf("tools/list: unreadable answer: %w", err)
		}
		if resp.Error != nil {
			return nil, version, fmt.Errorf("tools/list: error %d: %s", resp.Error.Code, resp.Error.Message)
		}
		if resp.Result == nil {
			return nil, version, fmt.Errorf("tools/list: no result in %s", m.Raw)
		}
		for _, t := range resp.Result.Tools {
			ti := ToolInfo{Name: t.Name, Title: t.Title, Annotations: t.Annotations}
			for p := range t.InputSchema.Properties {
				ti.Arguments = append(ti.Arguments, p)
			}
			slices.Sort(ti.Arguments)
			tools = append(tools, ti)
		}
		if resp.Result.NextCursor == "" {
			return tools, version, nil
		}
		cursor = resp.Result.NextCursor
	}
	return tools, version, fmt.Errorf("tools/list: more than 50 pages")
}
