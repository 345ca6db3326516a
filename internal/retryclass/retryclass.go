// Package retryclass decides how a client may retry a call of a tool after
// losing its response: Safe (read-only: retry with a new JSON-RPC id),
// Conditional (a keyed mutation, or an idempotentHint a run confirmed: retry
// with the same key and arguments) or Unsafe (reconcile before any retry).
//
// It is the one rule set behind both the retry-class table of `mcp-conform
// run` (with what the run's IDEM checks proved) and `mcp-conform review`
// (with the manifest and the annotations only, or a previous run's report).
// The order of the rules:
//
//  1. The manifest's mutation role is the application's contract: with a
//     key the tool is Conditional, unless a ledger check of a run failed
//     (then Unsafe: the key does not make retries safe); without a key it is
//     Unsafe. A readOnlyHint: true on it is noted as a contradiction.
//  2. readOnlyHint: true is Safe. Annotations are hints, untrusted unless
//     the server is (tools.mdx); a read-only tool is safe to retry anyway.
//  3. idempotentHint: true is Conditional only when a run confirmed it
//     (IDEM-ANNOTATION saw no second execution); otherwise a hint, not a
//     contract.
//  4. Anything else may mutate: Unsafe.
//
// The last evidence line is the one that decided the class (the console
// shows only it unless verbose).
package retryclass

import (
	"fmt"
	"strings"

	"github.com/mcp-conform/mcp-conform/reports"
)

// LedgerChecks are the IDEM checks whose failure makes a keyed mutation
// unsafe to retry even with its key.
var LedgerChecks = []string{"IDEM-LOST-RESPONSE", "IDEM-KEY-REUSE", "IDEM-CONCURRENT", "IDEM-RESTART", "IDEM-REPLAY-IDENTICAL"}

// Tool is what tools/list says about a tool: its name and annotations (nil
// when absent: the specification's defaults apply, readOnlyHint false,
// destructiveHint true, idempotentHint false).
type Tool struct {
	Name                              string
	ReadOnly, Destructive, Idempotent *bool
}

// Facts is what is known about a tool besides its annotations.
type Facts struct {
	// Mutation is set when the manifest's mutation role names the tool;
	// Key is that role's key argument ("" none).
	Mutation bool
	Key      string
	// Lookup is set when the manifest's lookup role names the tool.
	Lookup bool
	// Run is what a run observed; nil when no run is known.
	Run *Run
}

// Run is what a run's IDEM checks observed about a tool.
type Run struct {
	// LedgerFailed lists the failed ledger checks of the tool's target and
	// transport, each "ID FAIL: reason".
	LedgerFailed []string
	// LedgerProved lists what the passing ledger checks proved about the
	// tool, one line each.
	LedgerProved []string
	// Annotation is IDEM-ANNOTATION's finding on the tool ("" not checked);
	// AnnotationLied marks a finding that the hint does not hold.
	Annotation     string
	AnnotationLied bool
}

// TargetLabel names a target on one transport in the table's rows.
func TargetLabel(name, transport string) string { return name + " (" + transport + ")" }

// Classify decides a tool's retry class and the evidence for it, the
// deciding line last.
func Classify(t Tool, f Facts) (reports.RetryClass, []string) {
	var ev []string
	if f.Lookup {
		ev = append(ev, "manifest role lookup: reconciles by key")
	}
	ann := annotationText(t)
	readOnly := t.ReadOnly != nil && *t.ReadOnly
	idem := t.Idempotent != nil && *t.Idempotent
	run := f.Run
	if run == nil {
		run = &Run{}
	}
	switch {
	case f.Mutation && f.Key != "":
		ev = append(ev, fmt.Sprintf("manifest role mutation, key %q", f.Key), ann)
		if readOnly {
			ev = append(ev, "readOnlyHint: true contradicts the manifest's mutation role")
		}
		if len(run.LedgerFailed) > 0 {
			ev = append(ev, run.LedgerFailed...)
			return reports.Unsafe, append(ev, "the key does not make retries safe here: reconcile (lookup) before any retry")
		}
		ev = append(ev, run.LedgerProved...)
		if f.Run == nil {
			return reports.Conditional, append(ev, fmt.Sprintf("retry with the same %s and arguments, a new JSON-RPC id (the manifest's contract; no run verified it)", f.Key))
		}
		return reports.Conditional, append(ev, fmt.Sprintf("retry with the same %s: %d of %d ledger checks proved it in this run", f.Key, len(run.LedgerProved), len(LedgerChecks)))
	case f.Mutation:
		return reports.Unsafe, append(ev, ann, "manifest role mutation without a key: do not retry automatically, reconcile first")
	case readOnly:
		return reports.Safe, append(ev, ann+" (a hint, untrusted unless the server is): retry with a new JSON-RPC id")
	case idem && run.Annotation != "" && !run.AnnotationLied:
		return reports.Conditional, append(ev, ann, run.Annotation, "idempotentHint confirmed by the run: retry with the same arguments")
	}
	ev = append(ev, ann)
	switch {
	case run.Annotation != "":
		ev = append(ev, run.Annotation)
	case idem:
		ev = append(ev, "idempotentHint: true, but no key in the manifest and no run confirmed it: a hint, not a contract (annotations are untrusted hints, tools.mdx)")
	}
	return reports.Unsafe, append(ev, "mutation without a declared key: do not retry blindly, reconcile first")
}

// annotationText says what tools/list gave, e.g. "tools/list: readOnlyHint:
// false, idempotentHint: true".
func annotationText(t Tool) string {
	parts := []string{"readOnlyHint absent (default false: may mutate)"}
	if t.ReadOnly != nil {
		parts[0] = fmt.Sprintf("readOnlyHint: %v", *t.ReadOnly)
	}
	if t.Idempotent != nil {
		parts = append(parts, fmt.Sprintf("idempotentHint: %v", *t.Idempotent))
	}
	if t.Destructive != nil {
		parts = append(parts, fmt.Sprintf("destructiveHint: %v", *t.Destructive))
	}
	return "tools/list: " + strings.Join(parts, ", ")
}
