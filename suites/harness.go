package suites

import (
	"github.com/mcp-conform/mcp-conform/internal/harness"
	"github.com/mcp-conform/mcp-conform/protocol"
	"github.com/mcp-conform/mcp-conform/reports"
)

// The protocol versions as the catalog writes them: the keys of a check's
// Rules and the arguments of sameRule. They are protocol's constants, as
// strings; compare versions with protocol.Compare, never as text.
const (
	v20250618 = string(protocol.V20250618)
	v20251125 = string(protocol.V20251125)
	v20260728 = string(protocol.V20260728)
)

// The transports as the catalog writes them: a check's Transports, the keys
// of its On and Only. Compare a target's transport as h.Target().Via()
// against protocol.Transport…, not as text.
const (
	viaStdio     = string(protocol.TransportStdio)
	viaHTTP      = string(protocol.TransportHTTP)
	viaWebSocket = string(protocol.TransportWebSocket)
)

// The harness the catalog's checks run on lives in internal/harness; these
// names keep the catalog's files, and the commands, reading as before.
type (
	// H is the harness a check body uses (harness.H).
	H = harness.H
	// Conn is a stdio or WebSocket connection to the target.
	Conn = harness.Conn
	// HConn is a Streamable HTTP connection to the target.
	HConn = harness.HConn
	// Check describes one check of the catalog.
	Check = harness.Check
	// Rule is the clause a check enforces in one protocol version.
	Rule = harness.Rule
	// TransportRule is a check's rule on one transport and version.
	TransportRule = harness.TransportRule
	// Manifest describes a target.
	Manifest = harness.Manifest
	// Role is a tool of the target that a check exercises.
	Role = harness.Role
	// Config is the configuration of a run.
	Config = harness.Config
	// RunOptions selects and displays the checks of an in-process run.
	RunOptions = harness.RunOptions
	// ToolOutcome is the answer to one tools/call.
	ToolOutcome = harness.ToolOutcome
	// ToolInfo is one tool a target exposes.
	ToolInfo = harness.ToolInfo
	// ToolAnnotations are a tool's hints.
	ToolAnnotations = harness.ToolAnnotations
	// PartState is what one process of a split target saves for its parent.
	PartState = harness.PartState

	endpoint   = harness.Endpoint
	waiter     = harness.Waiter
	probeState = harness.ProbeState
)

// TmpDirPlaceholder is replaced by a check's private directory.
const TmpDirPlaceholder = harness.TmpDirPlaceholder

// AllVersions, given as the version, runs every version a target speaks.
const AllVersions = harness.AllVersions

var (
	define = harness.Define

	probeArgs = harness.ProbeArgs
	readProbe = harness.ReadProbe

	// Catalog returns every check, in declaration order.
	Catalog = harness.Catalog
	// Lookup finds a check by id (case-insensitive).
	Lookup = harness.Lookup
	// Configure sets the target of the next run.
	Configure = harness.Configure
	// Results returns the check results recorded so far.
	Results = harness.Results
	// NegotiatedVersion is the version the first target's probe settled on.
	NegotiatedVersion = harness.NegotiatedVersion
	// Planned counts the check runs a configuration and options select.
	Planned = harness.Planned
	// Selected returns the checks the options select.
	Selected = harness.Selected
	// BuildReport builds the report of the results recorded so far.
	BuildReport = harness.BuildReport
	// BuildReportFromGinkgo builds the report from Ginkgo's own.
	BuildReportFromGinkgo = harness.BuildReportFromGinkgo
	// MergeReports merges the reports of parallel processes.
	MergeReports = harness.MergeReports
	// SavePartState returns what this process learnt for SCHEMA-VALID
	// and the retry classes (a child of a split target saves it).
	SavePartState = harness.SavePartState
	// JoinParts makes one target's results from the parts of a split run.
	JoinParts = harness.JoinParts
	// LoadManifest reads a target manifest file.
	LoadManifest = harness.LoadManifest
	// StdioManifest is a target started by a command line.
	StdioManifest = harness.StdioManifest
	// URLManifest is a Streamable HTTP target at a URL.
	URLManifest = harness.URLManifest
	// ExpandVersions gives each target one version of spec.
	ExpandVersions = harness.ExpandVersions
	// ValidateRoles checks the manifest's roles against the target.
	ValidateRoles = harness.ValidateRoles

	// AcceptsVersions negotiates each of versions with target.
	AcceptsVersions = harness.AcceptsVersions
	// TargetTools lists the tools a target exposes.
	TargetTools = harness.TargetTools

	clip                 = harness.Clip
	customTransportsPage = harness.CustomTransportsPage
	newKey               = harness.NewKey
	unique               = harness.Unique
	waitEnded            = harness.WaitEnded
	isReplyTo            = harness.IsReplyTo
	isProgressFor        = harness.IsProgressFor
	barrierMethod        = harness.BarrierMethod
	httpEndpoint         = harness.HTTPEndpoint
	stdioEndpoint        = harness.StdioEndpoint
	parseOutcome         = harness.ParseOutcome
	toReportEntry        = harness.ReportEntry
	findTool             = harness.FindTool
	annotation           = harness.Annotation
)

// customTransports is the specification page that lets a transport other
// than stdio and Streamable HTTP carry MCP.
const customTransports = harness.CustomTransports

// Run runs the selected checks of the catalog in this process against
// cfg's target and returns the report. It may be called once per process.
func Run(cfg *Config, opts RunOptions) (*reports.Report, error) {
	return harness.Run(cfg, opts, Register)
}
