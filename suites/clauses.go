package suites

import "github.com/mcp-conform/mcp-conform/internal/harness"

// Traceability: the docs/CLAUSES.md ids each check enforces.
//
// A check declares its ids in Check.Clauses (and the part of a clause it
// does not see in Check.Limits). The checks written before the field
// existed get theirs from the table below at registration, so that their
// files stay untouched; a check that sets Clauses itself is not looked up.
// The table was read from each check's cited sentence (its Rules) against
// the clause rows of CLAUSES.md; TestCatalogClausesKnown (cmd/mcp-conform)
// fails when an id is unknown, runs in none of the clause's versions, or a
// clause CLAUSES.md marks covered has no check with a mutant.
//
// Checks that rest on the manifest's declared contract or on mcp-conform's
// reading (the IDEM-* ledger checks, PROGRESS-TOTAL-CONSTANT,
// ROBUST-UNKNOWN-TOOL, ROBUST-DUPLICATE-ID, SSE-HEARTBEAT) cite no
// specification sentence with an id and have none.
var existingClauses = map[string]struct {
	ids    []string
	limits map[string]string
}{
	"CANCEL-STDIO-SUPPRESS":    {ids: []string{"st#4", "st#5", "can#3", "c26#4"}, limits: map[string]string{"st#4": "silence only: the work itself is not probed"}},
	"CANCEL-COMPLETION-WINS":   {ids: []string{"basic#9", "can#4", "c26#5"}},
	"CANCEL-MALFORMED-IGNORED": {ids: []string{"basic#9", "can#5", "c26#6"}},
	"CANCEL-UNKNOWN-IGNORED":   {ids: []string{"basic#9", "can#5", "c26#6"}},
	"CANCEL-NO-SERVER-CANCEL":  {ids: []string{"can#1", "c26#2"}},
	"FLOW-FINAL-ARRIVES":       {ids: []string{"tr#11", "tr#13", "prg#1", "prg#6"}, limits: map[string]string{"tr#13": "the final response arrives; an early close is not provoked"}},
	"FLOW-SERVER-BOUNDED":      {ids: []string{"prg#5"}},
	"CANCEL-HTTP-CLOSE":        {ids: []string{"h#12", "h#13", "h#14", "c26#3"}},
	"CANCEL-HTTP-NOTIFICATION": {ids: []string{"tr#8", "can#2", "can#3"}, limits: map[string]string{"can#2": "freeing resources is not observed"}},
	"CANCEL-HTTP-DISCONNECT":   {ids: []string{"tr#17"}},
	"SSE-HEADERS":              {ids: []string{"h#11"}},
	"SESSION-REQUIRED":         {ids: []string{"tr#28"}},
	"SESSION-UNKNOWN-404":      {ids: []string{"tr#29"}},
	"SESSION-EXPIRED-404":      {ids: []string{"tr#29"}},
	"SESSION-DELETE":           {ids: []string{"tr#29"}},
	"SECURITY-ORIGIN":          {ids: []string{"tr#4", "tr#5", "h#1", "h#2"}},
	"SECURITY-PROTOCOL-VERSION": {ids: []string{"tr#31", "ver#1", "h#16"},
		limits: map[string]string{"ver#1": "HTTP status only", "h#16": "HTTP status only"}},
	"RECONNECT-REISSUE": {ids: []string{"basic#18", "tl#14"},
		limits: map[string]string{"basic#18": "a new connection after a cut only", "tl#14": "the list after a reconnect only"}},
	"RECONNECT-RESUME": {ids: []string{"tr#12", "tr#24", "tr#25"},
		limits: map[string]string{"tr#12": "the resumed stream only", "tr#24": "indirect: resumption works"}},
	"RECONNECT-RESUME-LIVE":        {ids: []string{"tr#11", "tr#16"}, limits: map[string]string{"tr#16": "the GET stream only"}},
	"PROGRESS-TOKEN-ECHO":          {ids: []string{"prg#2"}},
	"PROGRESS-INCREASING":          {ids: []string{"prg#1"}},
	"PROGRESS-STOP-AFTER-COMPLETE": {ids: []string{"prg#6"}},
	"PROGRESS-STOP-AFTER-CANCEL":   {ids: []string{"st#5", "prg#2"}},
	"ROBUST-PARSE-ERROR":           {ids: []string{"basic#1", "basic#7", "tr#9", "h#6"}, limits: map[string]string{"basic#1": "error paths only"}},
	"ROBUST-UNKNOWN-METHOD": {ids: []string{"basic#1", "basic#8", "h#17"},
		limits: map[string]string{"basic#1": "error paths only", "basic#8": "the code only", "h#17": "the JSON-RPC code, not the 404 status"}},
	"ROBUST-BATCH-REJECTED":      {ids: []string{"tr#9"}},
	"ROBUST-STDOUT-CLEAN":        {ids: []string{"tr#1", "tr#2", "tr#3", "st#1", "st#2"}, limits: map[string]string{"tr#1": "stdio only"}},
	"ROBUST-INVALID-REQUEST":     {ids: []string{"basic#1", "basic#7", "tr#9", "h#6"}, limits: map[string]string{"basic#1": "error paths only"}},
	"ROBUST-INVALID-PARAMS":      {ids: []string{"tl#11"}, limits: map[string]string{"tl#11": "one malformed call only"}},
	"ROBUST-OVERSIZE":            {ids: []string{"basic#1"}, limits: map[string]string{"basic#1": "error paths only"}},
	"ROBUST-INVALID-UTF8":        {ids: []string{"basic#1"}, limits: map[string]string{"basic#1": "error paths only"}},
	"ROBUST-STRAY-RESPONSE":      {ids: []string{"tr#8", "tr#9", "h#6"}},
	"SECURITY-SESSION-ENTROPY":   {ids: []string{"tr#26", "tr#27", "sec#5", "sec#6"}},
	"SECURITY-SESSION-REUSE":     {ids: []string{"tr#26"}},
	"SECURITY-SESSION-BINDING":   {ids: []string{"sec#4", "sec#7"}, limits: map[string]string{"sec#4": "session binding to a credential only"}},
	"SECURITY-LOOPBACK-BIND":     {ids: []string{"tr#6", "h#3", "sec#2"}},
	"TASK-CANCEL-TERMINAL":       {ids: []string{"basic#13", "task#29"}, limits: map[string]string{"basic#13": "the tasks/cancel acknowledgement only"}},
	"TASK-TERMINAL-FINAL":        {ids: []string{"task#8", "task#9", "task#30"}},
	"TASK-CANCEL-TERMINAL-ERROR": {ids: []string{"task#9", "task#27"}},
	"TASK-SURVIVES-DISCONNECT":   {ids: []string{"basic#18"}, limits: map[string]string{"basic#18": "a task after its connection closed only"}},
	"TASK-TTL-REPORTED":          {ids: []string{"task#13", "task#14", "task#15"}},
	"TASK-PROGRESS-STOPS":        {ids: []string{"prg#4"}},
	"TIMEOUT-CANCEL-STOPS": {ids: []string{"st#4", "st#5", "h#12", "h#13", "can#2", "can#3", "c26#4"},
		limits: map[string]string{"st#4": "silence only: the work itself is not probed on stdio", "can#2": "the work is probed over HTTP only"}},
}

// applyExistingClauses fills the clause ids of a check written before
// Check.Clauses existed.
// register adds c to the harness's catalog, with its clause ids from the
// table above when it declares none itself.
func register(c *Check) *Check {
	applyExistingClauses(c)
	return harness.Register(c)
}

func applyExistingClauses(c *Check) {
	if len(c.Clauses) > 0 {
		return
	}
	if e, ok := existingClauses[c.ID]; ok {
		c.Clauses = append([]string(nil), e.ids...)
		if len(e.limits) > 0 && c.Limits == nil {
			c.Limits = map[string]string{}
			for k, v := range e.limits {
				c.Limits[k] = v
			}
		}
	}
}
