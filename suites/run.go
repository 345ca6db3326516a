package suites

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/reports"
)

// RunOptions selects and displays the checks of an in-process run.
type RunOptions struct {
	// LabelFilter and Focus select checks as ginkgo's flags do.
	LabelFilter string
	Focus       []string
	// OnResult is called after each check, with the count so far and the
	// number of checks selected.
	OnResult func(done, total int, c reports.Check)
	// ToolVersion is written in the report.
	ToolVersion string
	// Budget bounds the whole run; zero means 15 minutes. Checks still
	// running when it ends are interrupted and reported as ERROR.
	Budget time.Duration
}

var registerOnce sync.Once

// Selected returns the checks the options select, in catalog order.
func Selected(opts RunOptions) ([]*Check, error) {
	filter := func([]string) bool { return true }
	if opts.LabelFilter != "" {
		f, err := types.ParseLabelFilter(opts.LabelFilter)
		if err != nil {
			return nil, fmt.Errorf("--label-filter: %w", err)
		}
		filter = f
	}
	var focus []*regexp.Regexp
	for _, f := range opts.Focus {
		re, err := regexp.Compile(f)
		if err != nil {
			return nil, fmt.Errorf("--focus %q: %w", f, err)
		}
		focus = append(focus, re)
	}
	var out []*Check
	for _, c := range catalog {
		if !filter(c.Labels()) {
			continue
		}
		if len(focus) > 0 && !slices.ContainsFunc(focus, func(re *regexp.Regexp) bool {
			return re.MatchString(c.Area() + " " + c.ID + " " + c.Title)
		}) {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// failRecorder is the minimal testing value RunSpecs needs.
type failRecorder struct{ failed bool }

func (f *failRecorder) Fail() { f.failed = true }

// Run runs the selected checks in this process against cfg's target and
// returns the report. It may be called once per process.
func Run(cfg *Config, opts RunOptions) (*reports.Report, error) {
	selected, err := Selected(opts)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	done := 0
	Configure(cfg, func(c reports.Check) {
		done++
		if opts.OnResult != nil {
			opts.OnResult(done, len(selected), c)
		}
	})
	registerOnce.Do(Register)

	gomega.RegisterFailHandler(ginkgo.Fail)
	suiteCfg, repCfg := ginkgo.GinkgoConfiguration()
	suiteCfg.LabelFilter = opts.LabelFilter
	suiteCfg.FocusStrings = opts.Focus
	suiteCfg.RandomSeed = 1
	suiteCfg.GracePeriod = 5 * time.Second
	suiteCfg.Timeout = opts.Budget
	if suiteCfg.Timeout <= 0 {
		suiteCfg.Timeout = 15 * time.Minute
	}
	repCfg.NoColor = true
	repCfg.Succinct = true
	stdout := formatter.ColorableStdOut
	formatter.ColorableStdOut = io.Discard
	defer func() { formatter.ColorableStdOut = stdout }()

	var t failRecorder
	ginkgo.RunSpecs(&t, "mcp-conform", suiteCfg, repCfg)
	signal.Reset(os.Interrupt)

	return BuildReport(cfg, opts.ToolVersion, started), nil
}

// BuildReport assembles the report of the checks recorded so far, in
// catalog order.
func BuildReport(cfg *Config, toolVersion string, started time.Time) *reports.Report {
	cfg = cfg.withDefaults()
	res := Results()
	order := map[string]int{}
	for i, c := range catalog {
		order[c.ID] = i
	}
	slices.SortStableFunc(res, func(a, b reports.Check) int { return order[a.ID] - order[b.ID] })
	m := cfg.Manifest
	r := &reports.Report{
		Schema:    reports.SchemaV1,
		Tool:      reports.Tool{Name: "mcp-conform", Version: toolVersion},
		StartedAt: started.UTC(),
		Duration:  float64(time.Since(started).Microseconds()) / 1000,
		Target: reports.Target{
			Name: m.Name, Transport: m.Transport, ProtocolVersion: NegotiatedVersion(),
			URL: m.URL, Mutant: cfg.Mutant,
		},
		Checks: res,
	}
	if len(m.Command) > 0 {
		r.Target.Command = fmt.Sprint(m.Command)
	}
	r.Summary = reports.Summarize(res)
	return r
}
