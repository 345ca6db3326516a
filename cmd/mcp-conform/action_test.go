package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-conform/mcp-conform/reports"
)

// actionOutputs are the outputs of the actions action.yml uses that it
// reads (actions/upload-artifact@v4's README).
var actionOutputs = map[string][]string{"actions/upload-artifact": {"artifact-id", "artifact-url"}}

// action is the part of action.yml the tests read.
type action struct {
	Name   string `yaml:"name"`
	Inputs map[string]struct {
		Description string `yaml:"description"`
		Default     string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID    string            `yaml:"id"`
			Name  string            `yaml:"name"`
			Uses  string            `yaml:"uses"`
			Shell string            `yaml:"shell"`
			Run   string            `yaml:"run"`
			Env   map[string]string `yaml:"env"`
			With  map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

func loadAction(t *testing.T) (action, string) {
	t.Helper()
	raw, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a action
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a, string(raw)
}

// TestActionYAML checks the GitHub Action's definition: a composite action
// whose expressions name only inputs and step outputs that exist, whose
// every input is described, which installs this module's command with go
// install, passes inputs through the environment, and calls only flags the
// run command has.
func TestActionYAML(t *testing.T) {
	a, raw := loadAction(t)
	if a.Runs.Using != "composite" {
		t.Errorf("runs.using %q, want composite", a.Runs.Using)
	}
	for name, in := range a.Inputs {
		if strings.TrimSpace(in.Description) == "" {
			t.Errorf("input %s has no description", name)
		}
	}
	steps, uses := map[string]string{}, map[string]string{}
	for i, s := range a.Runs.Steps {
		if s.Run != "" && s.Shell == "" {
			t.Errorf("step %d (%s) runs a script without a shell", i, s.Name)
		}
		if s.Run == "" && s.Uses == "" {
			t.Errorf("step %d (%s) neither runs nor uses", i, s.Name)
		}
		if s.ID != "" {
			steps[s.ID] = s.Run
			uses[s.ID] = strings.Split(s.Uses, "@")[0]
		}
		// Inputs reach scripts through env only: an expression pasted
		// into a script is a script injection.
		if strings.Contains(s.Run, "${{") {
			t.Errorf("step %s pastes an expression into its script", s.Name)
		}
	}
	for _, m := range regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`).FindAllStringSubmatch(raw, -1) {
		parts := strings.Split(m[1], ".")
		switch {
		case parts[0] == "inputs" && len(parts) == 2:
			if _, ok := a.Inputs[parts[1]]; !ok {
				t.Errorf("%s: no such input", m[0])
			}
		case parts[0] == "steps" && len(parts) == 4 && parts[2] == "outputs":
			run, ok := steps[parts[1]]
			switch {
			case !ok:
				t.Errorf("%s: no step with id %s", m[0], parts[1])
			case uses[parts[1]] != "":
				// An action's own outputs.
				if !slices.Contains(actionOutputs[uses[parts[1]]], parts[3]) {
					t.Errorf("%s: %s has no output %s", m[0], uses[parts[1]], parts[3])
				}
			case strings.Contains(run, "mcp-conform summary") && strings.Contains(run, "--github"):
				// Written by the summary command (TestActionSummary
				// reads them back).
				if !slices.Contains(reports.GitHubOutputs, parts[3]) {
					t.Errorf("%s: mcp-conform summary --github does not write %s", m[0], parts[3])
				}
			case !strings.Contains(run, parts[3]+"="):
				t.Errorf("%s: step %s never writes %s", m[0], parts[1], parts[3])
			}
		default:
			t.Errorf("%s: unexpected expression", m[0])
		}
	}
	used := map[string]bool{}
	for _, s := range a.Runs.Steps {
		if s.Uses != "" {
			used[strings.Split(s.Uses, "@")[0]] = true
		}
	}
	if !used["actions/upload-artifact"] || !used["actions/setup-go"] {
		t.Errorf("the action does not set up Go and upload the reports: %v", used)
	}
	for _, o := range reports.GitHubOutputs {
		if _, ok := a.Outputs[o]; !ok {
			t.Errorf("the action does not expose output %s", o)
		}
	}

	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	module := strings.Fields(strings.SplitN(string(mod), "\n", 2)[0])[1]
	if !strings.Contains(raw, `go install "`+module+`/cmd/mcp-conform@${MCP_CONFORM_VERSION}"`) {
		t.Errorf("action.yml does not go install %s/cmd/mcp-conform@VERSION", module)
	}
	run := newRunCmd()
	for _, f := range regexp.MustCompile(`(?m)(--[a-z][a-z-]+)`).FindAllString(steps["run"], -1) {
		if run.Flags().Lookup(strings.TrimPrefix(f, "--")) == nil {
			t.Errorf("the action passes %s, which mcp-conform run does not have", f)
		}
	}
}

// actionScripts returns the scripts of the run, summary and exit steps.
func actionScripts(t *testing.T) (run, summary, exit string) {
	t.Helper()
	a, _ := loadAction(t)
	for _, s := range a.Runs.Steps {
		switch {
		case s.ID == "run":
			run = s.Run
		case s.ID == "summary":
			summary = s.Run
		case strings.Contains(s.Run, `exit "${CODE`):
			exit = s.Run
		}
	}
	if run == "" || summary == "" || exit == "" {
		t.Fatal("no run, summary or exit step in action.yml")
	}
	return run, summary, exit
}

// TestActionSteps runs the action's own scripts with bash, as the runner
// would (inputs in the environment; GITHUB_OUTPUT and GITHUB_STEP_SUMMARY
// files), against the built CLI: the run step, then the summary step, then
// the exit step. It checks the reports, the exit code passed on, the
// Markdown appended to the step summary, an annotation per failing check,
// the outputs, that args are one argument per line (a --focus value with
// spaces selects by title), that the run's output cannot issue workflow
// commands, and what a run that wrote no report leaves.
func TestActionSteps(t *testing.T) {
	runScript, summaryScript, exitScript := actionScripts(t)
	const artifactURL = "https://github.com/o/r/actions/runs/7/artifacts/9"
	for _, tc := range []struct {
		name string
		env  map[string]string
		code string
		// counts is "pass fail warn skip error", empty for no report.
		counts  string
		summary []string // in the step summary
		notes   []string // in the steps' stdout
		absent  []string // in neither
	}{
		{name: "mutant, args one per line",
			env:  map[string]string{"IN_ARGS": "  -q\n\n--mutant\nrespond-after-cancel \n--focus\nno response for a request cancelled in flight\n"},
			code: "1", counts: "0 1 0 0 0",
			summary: []string{"## mcp-conform: ❌ FAIL\n", "| **FAIL** | `CANCEL-STDIO-SUPPRESS` no response for a request cancelled in flight | MUST | “To cancel an in-flight request",
				"MUST NOT send any further messages for it.", "[report.html](" + artifactURL + ")", "in the artifact [mcp-conform-reports](" + artifactURL + ")"},
			notes: []string{"::error title=FAIL CANCEL-STDIO-SUPPRESS (MUST)::no response for a request cancelled in flight: the server answered"}},
		{name: "stdio command passes",
			env:  map[string]string{"IN_COMMAND": binary + " fixture", "IN_ARGS": "-q\n--focus\nROBUST-PARSE-ERROR", "IN_SPEC": "2025-11-25"},
			code: "0", counts: "1 0 0 0 0",
			summary: []string{"## mcp-conform: ✅ PASS\n", "| MUST | 1 | 1 |"},
			absent:  []string{"::error", "::warning", "checks that did not pass"}},
		{name: "run wrote no report",
			env:     map[string]string{"IN_ARGS": "--no-such-flag"},
			code:    "2",
			summary: []string{"## mcp-conform: ⛔ ERROR\n", "mcp-conform run wrote no report (it exited 2)"},
			notes:   []string{"::error title=mcp-conform::mcp-conform run wrote no report (it exited 2)", "unknown flag: --no-such-flag"}},
		{name: "old one-line args refused",
			env:     map[string]string{"IN_ARGS": "--strict --baseline ci/b.yaml"},
			code:    "2",
			summary: []string{"mcp-conform run wrote no report (it exited 2)"},
			notes:   []string{"::error title=mcp-conform args::line '--strict --baseline ci/b.yaml' holds a space in its flag: give one argument per line"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limitParallel(t)
			dir := t.TempDir()
			outFile, sumFile := filepath.Join(dir, "github_output"), filepath.Join(dir, "step_summary")
			reportDir := filepath.Join(dir, "reports")
			env := append(os.Environ(), "PATH="+filepath.Dir(binary)+":"+os.Getenv("PATH"),
				"GITHUB_OUTPUT="+outFile, "GITHUB_STEP_SUMMARY="+sumFile, "REPORT_DIR="+reportDir,
				"IN_COMMAND=", "IN_URL=", "IN_MANIFEST=", "IN_SPEC=", "IN_ARGS=",
				"ARTIFACT_NAME=mcp-conform-reports", "ARTIFACT_URL="+artifactURL,
				"GORACE=atexit_sleep_ms=0", "NO_COLOR=1")
			for k, v := range tc.env {
				env = append(env, k+"="+v)
			}
			step := func(name, script string, extra ...string) (string, int) {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), runLimit)
				defer cancel()
				cmd := exec.CommandContext(ctx, "bash", "-e", "-c", script)
				cmd.Env, cmd.Dir = append(env, extra...), dir
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				err := cmd.Run()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatalf("%s step: %v\n%s", name, err, out.String())
				}
				return out.String(), code
			}
			runOut, code := step("run", runScript)
			if code != 0 {
				t.Fatalf("run step exited %d:\n%s", code, runOut)
			}
			outputs := readOutputs(t, outFile)
			if outputs["exit-code"] != tc.code {
				t.Fatalf("exit-code output %q, want %s\n%s", outputs["exit-code"], tc.code, runOut)
			}
			if tc.counts != "" {
				for _, f := range []string{"report.json", "junit.xml", "report.html", "summary.md"} {
					if fi, err := os.Stat(filepath.Join(reportDir, f)); err != nil || fi.Size() == 0 {
						t.Errorf("report %s not written: %v", f, err)
					}
				}
				// The run's own output is fenced off from the runner.
				m := regexp.MustCompile(`(?m)^::stop-commands::(\S+)$`).FindStringSubmatch(runOut)
				if m == nil || !strings.Contains(runOut, "\n::"+m[1]+"::\n") ||
					!strings.Contains(runOut[strings.Index(runOut, m[0]):strings.Index(runOut, "::"+m[1]+"::")], "verdict:") {
					t.Errorf("the run's output is not between ::stop-commands::TOKEN and ::TOKEN:::\n%s", runOut)
				}
			}
			sumOut, code := step("summary", summaryScript, "CODE="+outputs["exit-code"])
			if code != 0 {
				t.Fatalf("summary step exited %d:\n%s", code, sumOut)
			}
			outputs = readOutputs(t, outFile)
			got := strings.Join([]string{outputs["pass"], outputs["fail"], outputs["warn"], outputs["skip"], outputs["error"]}, " ")
			if tc.counts == "" && strings.TrimSpace(got) != "" || tc.counts != "" && got != tc.counts {
				t.Errorf("count outputs %q, want %q", got, tc.counts)
			}
			for _, o := range reports.GitHubOutputs {
				if _, ok := outputs[o]; !ok {
					t.Errorf("output %s not written", o)
				}
			}
			if want := filepath.Join(reportDir, "report.json"); tc.counts != "" && outputs["report-json"] != want {
				t.Errorf("report-json output %q, want %q", outputs["report-json"], want)
			}
			summary, err := os.ReadFile(sumFile)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.summary {
				if !strings.Contains(string(summary), want) {
					t.Errorf("step summary lacks %q:\n%s", want, summary)
				}
			}
			for _, want := range tc.notes {
				if !strings.Contains(runOut+sumOut, want) {
					t.Errorf("steps' output lacks %q:\nrun:\n%s\nsummary:\n%s", want, runOut, sumOut)
				}
			}
			for _, bad := range tc.absent {
				if strings.Contains(runOut+sumOut+string(summary), bad) {
					t.Errorf("%q written:\nrun:\n%s\nsummary step:\n%s\nstep summary:\n%s", bad, runOut, sumOut, summary)
				}
			}
			if _, code := step("exit", exitScript, "CODE="+outputs["exit-code"]); strconv.Itoa(code) != tc.code {
				t.Errorf("exit step exited %d, want %s", code, tc.code)
			}
		})
	}
}

// readOutputs reads a GITHUB_OUTPUT file of name=value lines; a later
// line wins.
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("GITHUB_OUTPUT line %q is not name=value", line)
		}
		out[k] = v
	}
	return out
}

// TestMarkdownRunAndSummaryAgree: "run --markdown" and "summary" of the
// run's JSON report write the same Markdown, with the exit code given or
// computed; summary refuses a missing report outside --github and
// --github outside a runner.
func TestMarkdownRunAndSummaryAgree(t *testing.T) {
	limitParallel(t)
	dir := t.TempDir()
	md := filepath.Join(dir, "summary.md")
	// execCLI adds --json dir/report.json.
	r, err := execCLI(binary, dir, runLimit, "run", "-q", "--mutant", "respond-after-cancel", "--focus", "CANCEL-STDIO-SUPPRESS|ROBUST-PARSE-ERROR",
		"--markdown", md, "--html", filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if r.code != 1 {
		t.Fatalf("run exited %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	want, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(want), "| **FAIL** | `CANCEL-STDIO-SUPPRESS`") || !strings.Contains(string(want), "`report.html`") {
		t.Errorf("run --markdown wrote:\n%s", want)
	}
	for _, args := range [][]string{{"--exit-code", "1"}, nil} {
		cmd := exec.Command(binary, append([]string{"summary", filepath.Join(dir, "report.json"), "--html-name", "report.html"}, args...)...)
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("summary %v: %v", args, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("summary %v wrote\n%s\nrun --markdown wrote\n%s", args, got, want)
		}
	}
	for _, tc := range []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"summary", filepath.Join(dir, "missing.json")}, nil, "no such file"},
		{[]string{"summary", filepath.Join(dir, "report.json"), "--github"}, []string{"GITHUB_STEP_SUMMARY=", "GITHUB_OUTPUT="}, "--github needs $GITHUB_STEP_SUMMARY"},
	} {
		cmd := exec.Command(binary, tc.args...)
		cmd.Env = append(os.Environ(), tc.env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("mcp-conform %v: %v %s, want exit 2 saying %q", tc.args, err, stderr.String(), tc.want)
		}
	}
}

// TestActionInstallStep runs the install step's script with no version
// input, as "uses: …@v1" does: it builds the action's own source (here,
// this checkout), stamps it with the action's ref, and puts it on the
// runner's PATH file.
func TestActionInstallStep(t *testing.T) {
	limitParallel(t)
	a, _ := loadAction(t)
	var script string
	for _, s := range a.Runs.Steps {
		if strings.Contains(s.Run, "go install") {
			script = s.Run
		}
	}
	if script == "" {
		t.Fatal("no install step in action.yml")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MCP_CONFORM_VERSION=", "GITHUB_ACTION_PATH="+root, "GITHUB_ACTION_REF=v1",
		"GITHUB_PATH="+filepath.Join(dir, "github_path"), "GOBIN="+filepath.Join(dir, "bin"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("install step: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "mcp-conform v1 (") {
		t.Errorf("install step printed %q, want the version line of v1", out)
	}
	path, err := os.ReadFile(filepath.Join(dir, "github_path"))
	if err != nil || string(path) != filepath.Join(dir, "bin")+"\n" {
		t.Errorf("GITHUB_PATH %q (%v), want %s", path, err, filepath.Join(dir, "bin"))
	}
}
