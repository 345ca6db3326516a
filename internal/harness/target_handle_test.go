package harness

import (
	"strings"
	"testing"
)

// TestManifestHandleRole: the handle role needs field, use and param, and
// those belong to it alone.
func TestManifestHandleRole(t *testing.T) {
	load := rolesLoader(t)
	m, err := load("  handle: {tool: open_cart, field: cart_id, use: view_cart, param: cart_id}\n")
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Roles["handle"]; r.Tool != "open_cart" || r.Field != "cart_id" || r.Use != "view_cart" || r.Param != "cart_id" {
		t.Errorf("handle role %+v", r)
	}
	if _, err := load("  handle: {tool: open_cart, field: cart_id}\n"); err == nil || !strings.Contains(err.Error(), "role handle") {
		t.Errorf("a handle role without use and param: %v", err)
	}
	if _, err := load("  slow: {tool: slow, use: x}\n"); err == nil || !strings.Contains(err.Error(), "handle role only") {
		t.Errorf("use on another role: %v", err)
	}
}
