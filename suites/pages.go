package suites

import "github.com/mcp-conform/mcp-conform/internal/harness"

// The pages and seeds the catalog cites, and the version lists its rules use.

var (
	legacyVersions = []string{v20251125, v20250618}
	allVersions    = []string{v20260728, v20251125, v20250618}
)

const (
	cancelLegacy = "specification/VERSION/basic/utilities/cancellation.mdx"
	cancelModern = "specification/2026-07-28/basic/patterns/cancellation.mdx"
	stdioModern  = harness.StdioModernPage
	// patternsModern is the 2026-07-28 patterns overview ("Servers MUST NOT
	// initiate JSON-RPC requests").
	patternsModern = "specification/2026-07-28/basic/patterns/index.mdx"
	indexPage      = "specification/VERSION/basic/index.mdx"
)

const (
	progressLegacy = "specification/VERSION/basic/utilities/progress.mdx"
	progressModern = "specification/2026-07-28/basic/patterns/progress.mdx"
)

const (
	httpLegacy = "specification/VERSION/basic/transports.mdx"
	httpModern = "specification/2026-07-28/basic/transports/streamable-http.mdx"
)

const securityLegacy = "specification/VERSION/basic/transports.mdx"

const (
	basicLegacy  = "specification/VERSION/basic/index.mdx"
	changelog618 = "specification/2025-06-18/changelog.mdx"
)

// The JSON-RPC sentences the bad-input checks rest on.
const (
	jsonrpcMust = "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification."
	// httpRejectLegacy and httpRejectModern are the HTTP rule for input
	// the server cannot accept.
	httpRejectLegacy = "If the server cannot accept the input, it MUST return an HTTP error status code (e.g., 400 Bad Request)."
	httpRejectModern = "If the server cannot accept it, it MUST return an HTTP error status code (e.g., 400 Bad Request)."
	basicModernPage  = "specification/2026-07-28/basic/index.mdx"
)

// Spec pages the bad-input checks cite.
const (
	toolsLegacy     = "specification/VERSION/server/tools.mdx"
	toolsModern     = "specification/2026-07-28/server/tools.mdx"
	basicModern     = "specification/2026-07-28/basic/index.mdx"
	transportLegacy = "specification/VERSION/basic/transports.mdx"
)

// bestPractices is the security best practices page (session hijacking)
// that transports.mdx links to. At the pinned commit of the specification
// it lives in the docs tree, not under specification/ (CLAUSES.md, sec).
const bestPractices = "docs/VERSION/tutorials/security/security_best_practices.mdx"

const lifecycleLegacy = "specification/VERSION/basic/lifecycle.mdx"

// The ledger clauses are not in the MCP specification, which leaves
// idempotency to the application (tools are model-controlled calls; a
// JSON-RPC id only correlates one request with its response). They are the
// seeds' reading: the French lesson's failure table (MutationLedger) and the
// Chinese article's reliability sidecar (operation key, atomic claim,
// claimed → completed → verified, reconcile before retry, fail closed).
const (
	seedLesson  = "seeds/000_a0534be125a2219a.txt"
	seedSidecar = "seeds/003_a87572a896abb13e.txt"
	toolsPage   = "specification/VERSION/server/tools.mdx"
)

// Spec pages of the two task eras.
const (
	tasksLegacy = "specification/2025-11-25/basic/utilities/tasks.mdx"
	tasksModern = "extensions/tasks/overview.mdx"
	// tasksExtension is the 2026-07-28 tasks extension identifier.
	tasksExtension = "io.modelcontextprotocol/tasks"
)

// seedFlow is the seed lesson's production failure table (rows "Unbounded
// progress queue" and "Final response dropped under pressure").
const seedFlow = "seeds/000_a0534be125a2219a.txt"
