package harness

import (
	"fmt"
	"os"
	"strings"
)

// TmpDirPlaceholder, in a manifest's command or env values, stands for a
// directory private to one check: every server process the check starts
// (a second connection, a restart) gets the same one, and it is removed
// when the check ends. The built-in targets keep their ledger there, so
// that two processes of one check share it and a restart finds it.
const TmpDirPlaceholder = "{tmpdir}"

// usesTmpDir reports whether the manifest refers to the check's directory.
func usesTmpDir(m *Manifest) bool {
	for _, a := range m.Command {
		if strings.Contains(a, TmpDirPlaceholder) {
			return true
		}
	}
	for _, v := range m.Env {
		if strings.Contains(v, TmpDirPlaceholder) {
			return true
		}
	}
	return false
}

// withTmpDir returns a copy of m with the placeholder replaced by dir.
func withTmpDir(m *Manifest, dir string) *Manifest {
	c := *m
	c.Command = nil
	for _, a := range m.Command {
		c.Command = append(c.Command, strings.ReplaceAll(a, TmpDirPlaceholder, dir))
	}
	c.Env = make(map[string]string, len(m.Env))
	for k, v := range m.Env {
		c.Env[k] = strings.ReplaceAll(v, TmpDirPlaceholder, dir)
	}
	return &c
}

// checkDir returns the check's private directory, creating it on first use.
func (h *H) checkDir() (string, error) {
	if h.tmp != "" {
		return h.tmp, nil
	}
	d, err := os.MkdirTemp("", "mcp-conform-check-*")
	if err != nil {
		return "", fmt.Errorf("create the check's directory: %w", err)
	}
	h.tmp = d
	return d, nil
}

// expandTarget resolves the placeholder for a connection: the check's
// directory, or for a connection outside any check (the probe) a directory
// of its own, removed by the returned cleanup.
func expandTarget(target *Manifest, h *H) (*Manifest, func(), error) {
	if !usesTmpDir(target) {
		return target, func() {}, nil
	}
	if h != nil {
		d, err := h.checkDir()
		if err != nil {
			return nil, nil, err
		}
		return withTmpDir(target, d), func() {}, nil
	}
	d, err := os.MkdirTemp("", "mcp-conform-probe-*")
	if err != nil {
		return nil, nil, fmt.Errorf("create a directory for the probe: %w", err)
	}
	return withTmpDir(target, d), func() { _ = os.RemoveAll(d) }, nil
}
