package harness

import (
	"strings"
	"testing"
)

// TestManifestTaskContract: pageSize and failArguments are read on the task
// role and belong to it alone; a page size is positive.
func TestManifestTaskContract(t *testing.T) {
	load := rolesLoader(t)
	m, err := load("  task: {tool: research, arguments: {topic: x}, pageSize: 2, failArguments: {fail: true}}\n")
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Roles["task"]; r.PageSize != 2 || r.FailArguments["fail"] != true {
		t.Errorf("task role %+v", r)
	}
	if _, err := load("  slow: {tool: slow, pageSize: 2}\n"); err == nil || !strings.Contains(err.Error(), "task role only") {
		t.Errorf("pageSize on another role: %v", err)
	}
	if _, err := load("  slow: {tool: slow, failArguments: {fail: true}}\n"); err == nil || !strings.Contains(err.Error(), "task role only") {
		t.Errorf("failArguments on another role: %v", err)
	}
	if _, err := load("  task: {tool: research, pageSize: -1}\n"); err == nil || !strings.Contains(err.Error(), "pageSize") {
		t.Errorf("a negative pageSize: %v", err)
	}
}
