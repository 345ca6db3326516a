// Package docs embeds the project documents that code reads: the clause map
// CLAUSES.md (every normative sentence of the specification, with stable
// ids) and clauses-not-testable.yaml (the clauses a black-box harness cannot
// test, each with its reason). Package internal/clauses parses them.
package docs

import _ "embed"

// Clauses is CLAUSES.md, the project's copy of the clause map (vendored from
// ../shared/CLAUSES.md; new ids are added here, none is ever renumbered).
//
//go:embed CLAUSES.md
var Clauses []byte

// NotTestable is clauses-not-testable.yaml.
//
//go:embed clauses-not-testable.yaml
var NotTestable []byte
