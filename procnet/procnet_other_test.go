//go:build !linux

package procnet_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/procnet"
)

// TestUnsupportedOutsideLinux: without /proc the live readers refuse with
// an error that names the platform and wraps errors.ErrUnsupported.
func TestUnsupportedOutsideLinux(t *testing.T) {
	_, err := procnet.Listening(80)
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), runtime.GOOS) {
		t.Errorf("Listening: %v, want an unsupported error naming %s", err, runtime.GOOS)
	}
	_, err = procnet.GroupSockets(1)
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("GroupSockets: %v, want an unsupported error", err)
	}
}
