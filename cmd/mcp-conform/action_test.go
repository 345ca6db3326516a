package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

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
	steps := map[string]string{}
	for i, s := range a.Runs.Steps {
		if s.Run != "" && s.Shell == "" {
			t.Errorf("step %d (%s) runs a script without a shell", i, s.Name)
		}
		if s.Run == "" && s.Uses == "" {
			t.Errorf("step %d (%s) neither runs nor uses", i, s.Name)
		}
		if s.ID != "" {
			steps[s.ID] = s.Run
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
			if !ok {
				t.Errorf("%s: no step with id %s", m[0], parts[1])
			} else if !strings.Contains(run, parts[3]+"=") {
				t.Errorf("%s: step %s never writes %s", m[0], parts[1], parts[3])
			}
		default:
			t.Errorf("%s: unexpected expression", m[0])
		}
	}
	uses := map[string]bool{}
	for _, s := range a.Runs.Steps {
		if s.Uses != "" {
			uses[strings.Split(s.Uses, "@")[0]] = true
		}
	}
	if !uses["actions/upload-artifact"] || !uses["actions/setup-go"] {
		t.Errorf("the action does not set up Go and upload the reports: %v", uses)
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

// TestActionRunStep runs the action's own run script with bash, as the
// runner would (inputs in the environment, GITHUB_OUTPUT a file), against
// the built CLI: the three reports are written and the exit code is passed
// on, 1 for a mutant that breaks a MUST and 0 for a stdio command whose
// checks all pass or skip; the last step exits with it.
func TestActionRunStep(t *testing.T) {
	a, _ := loadAction(t)
	var script, exitScript string
	for _, s := range a.Runs.Steps {
		switch {
		case s.ID == "run":
			script = s.Run
		case strings.Contains(s.Run, `exit "${CODE`):
			exitScript = s.Run
		}
	}
	if script == "" || exitScript == "" {
		t.Fatal("no run step or exit step in action.yml")
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		code string
	}{
		{"mutant via args", map[string]string{"IN_ARGS": "-q --mutant respond-after-cancel --focus CANCEL-STDIO-SUPPRESS"}, "1"},
		{"stdio command", map[string]string{"IN_COMMAND": binary + " fixture", "IN_ARGS": "-q --focus ROBUST-PARSE-ERROR", "IN_SPEC": "2025-11-25"}, "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limitParallel(t)
			dir := t.TempDir()
			out := filepath.Join(dir, "github_output")
			env := append(os.Environ(), "PATH="+filepath.Dir(binary)+":"+os.Getenv("PATH"), "GITHUB_OUTPUT="+out,
				"REPORT_DIR="+filepath.Join(dir, "reports"), "IN_COMMAND=", "IN_URL=", "IN_MANIFEST=", "IN_SPEC=", "IN_ARGS=",
				"GORACE=atexit_sleep_ms=0", "NO_COLOR=1")
			for k, v := range tc.env {
				env = append(env, k+"="+v)
			}
			ctx, cancel := context.WithTimeout(context.Background(), runLimit)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-e", "-c", script)
			cmd.Env, cmd.Dir = env, dir
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("run step failed: %v\n%s\n%s", err, stdout.String(), stderr.String())
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if want := "exit-code=" + tc.code + "\n"; string(got) != want {
				t.Errorf("GITHUB_OUTPUT %q, want %q\n%s\n%s", got, want, stdout.String(), stderr.String())
			}
			for _, f := range []string{"report.json", "junit.xml", "report.html"} {
				if fi, err := os.Stat(filepath.Join(dir, "reports", f)); err != nil || fi.Size() == 0 {
					t.Errorf("report %s not written: %v", f, err)
				}
			}
			ex := exec.Command("bash", "-e", "-c", exitScript)
			ex.Env = append(os.Environ(), "CODE="+tc.code)
			err = ex.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if want := tc.code; want != strconv.Itoa(code) {
				t.Errorf("exit step exited %d, want %s", code, want)
			}
		})
	}
}
