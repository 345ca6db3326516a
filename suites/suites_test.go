package suites_test

import (
	"flag"
	"os"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"go.uber.org/goleak"

	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

// Flags for `ginkgo -r suites -- --stdio "…"` (or go test ./suites -args …).
// With none, the specs run against the built-in reference server.
var (
	flagStdio    = flag.String("stdio", "", "command line of a stdio MCP server to test")
	flagManifest = flag.String("manifest", "", "target manifest (YAML)")
	flagURL      = flag.String("url", "", "endpoint URL of a running Streamable HTTP MCP server")
	flagSpec     = flag.String("spec", "", "force a protocol version")
	flagMutant   = flag.String("mutant", "", "run against this mutant of the reference server")
	flagJSON     = flag.String("json", "", "write the JSON report here")
)

func TestMain(m *testing.M) {
	fixtures.ServeIfAsked()
	// Every connection, proxy and client a check starts is closed when the
	// check ends: nothing may outlive the run.
	// Ginkgo's own interrupt handler stays registered for the process's
	// life by design.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/onsi/ginkgo/v2/internal/interrupt_handler.(*InterruptHandler).registerForInterrupts.func2"))
}

func TestSuites(t *testing.T) {
	cfg := &suites.Config{Spec: *flagSpec, Mutant: *flagMutant}
	var err error
	cfg.Targets, err = suites.TargetFlags{Stdio: *flagStdio, URL: *flagURL, Manifest: *flagManifest, Mutant: *flagMutant}.Targets()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Targets = suites.ExpandVersions(cfg.Targets, *flagSpec)
	suites.Configure(cfg, nil)
	suites.Register()
	ginkgo.ReportAfterSuite("mcp-conform report", func(r ginkgo.Report) {
		if r.SuiteConfig.DryRun || *flagJSON == "" {
			return
		}
		f, err := os.Create(*flagJSON)
		if err != nil {
			ginkgo.Fail(err.Error())
		}
		defer f.Close()
		rep, err := suites.BuildReportFromGinkgo(cfg, "test", r)
		if err != nil {
			ginkgo.Fail(err.Error())
		}
		if err := reports.WriteJSON(f, rep); err != nil {
			ginkgo.Fail(err.Error())
		}
	})
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "mcp-conform suites")
}
