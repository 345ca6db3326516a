package gosdk

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SlowArgs are the slow tool's arguments.
type SlowArgs struct {
	Steps  int    `json:"steps,omitempty" jsonschema:"number of steps (default 5)"`
	StepMs int    `json:"stepMs,omitempty" jsonschema:"milliseconds per step (default 100)"`
	Tag    string `json:"tag,omitempty" jsonschema:"a label the probe tool reports this call's work under"`
}

// ProbeArgs name a tagged slow call.
type ProbeArgs struct {
	Tag string `json:"tag" jsonschema:"the tag given to the slow tool"`
}

// WorkState is what one tagged slow call did: the probe tool's answer.
type WorkState struct {
	Tag string `json:"tag"`
	// Started: the call began (false for a tag never seen).
	Started bool `json:"started"`
	// Steps is how many steps the call was asked for.
	Steps int `json:"steps"`
	// StepsRun counts the steps completed.
	StepsRun int `json:"stepsRun"`
	// ProgressSent counts the progress notifications the call sent.
	ProgressSent int `json:"progressSent"`
	// Finished: every step ran and the result was returned.
	Finished bool `json:"finished"`
	// Cancelled: the request's context was cancelled before the last step.
	Cancelled bool `json:"cancelled"`
}

// workLog holds the state of tagged slow calls, by tag (the latest call
// of a tag replaces an earlier one's).
type workLog struct {
	mu    sync.Mutex
	byTag map[string]*WorkState
}

func newWorkLog() *workLog { return &workLog{byTag: map[string]*WorkState{}} }

// start records a new call of tag and returns its updater (a no-op for an
// untagged call).
func (l *workLog) start(tag string, steps int) func(func(*WorkState)) {
	if tag == "" {
		return func(func(*WorkState)) {}
	}
	w := &WorkState{Tag: tag, Started: true, Steps: steps}
	l.mu.Lock()
	l.byTag[tag] = w
	l.mu.Unlock()
	return func(f func(*WorkState)) {
		l.mu.Lock()
		f(w)
		l.mu.Unlock()
	}
}

func (l *workLog) get(tag string) WorkState {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w, ok := l.byTag[tag]; ok {
		return *w
	}
	return WorkState{Tag: tag}
}

func (t *Tools) addSlow(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{
		Name: t.name(NameSlow),
		Description: "Test tool (mcp-conform): runs steps x stepMs milliseconds and sends a progress notification after each step " +
			"when the request carries a progress token; stops at the next step once the request is cancelled.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, t.slow)
	mcp.AddTool(s, &mcp.Tool{
		Name: t.name(NameProbe),
		Description: "Test tool (mcp-conform): reports what the " + t.name(NameSlow) + " call with this tag did: " +
			"started, stepsRun, finished, cancelled (from every session).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in ProbeArgs) (*mcp.CallToolResult, WorkState, error) {
		if in.Tag == "" {
			return nil, WorkState{}, fmt.Errorf("tag is required")
		}
		return nil, t.work.get(in.Tag), nil
	})
}

// slow runs the steps. It checks the request's context at every step
// boundary, after the step's timer too (a select with both ready picks
// either), so a cancelled call runs no further step and sends no further
// progress.
func (t *Tools) slow(ctx context.Context, req *mcp.CallToolRequest, in SlowArgs) (*mcp.CallToolResult, any, error) {
	steps, stepMs := in.Steps, in.StepMs
	if steps == 0 {
		steps = 5
	}
	if stepMs == 0 {
		stepMs = 100
	}
	if steps < 1 || steps > t.opts.MaxSteps || stepMs < 1 || stepMs > t.opts.MaxStepMs {
		return nil, nil, fmt.Errorf("steps must be 1 to %d and stepMs 1 to %d", t.opts.MaxSteps, t.opts.MaxStepMs)
	}
	token := req.Params.GetProgressToken()
	name := t.name(NameSlow)
	t.opts.Logf("%s start steps=%d stepMs=%d token=%v tag=%q", name, steps, stepMs, token, in.Tag)
	update := t.work.start(in.Tag, steps)
	timer := time.NewTimer(time.Duration(stepMs) * time.Millisecond)
	defer timer.Stop()
	for i := 1; i <= steps; i++ {
		if i > 1 {
			timer.Reset(time.Duration(stepMs) * time.Millisecond)
		}
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
		if ctx.Err() != nil {
			update(func(w *WorkState) { w.Cancelled = true })
			t.opts.Logf("%s cancelled at step %d/%d tag=%q: %v", name, i-1, steps, in.Tag, context.Cause(ctx))
			return nil, nil, ctx.Err()
		}
		update(func(w *WorkState) { w.StepsRun = i })
		if token == nil || req.Session == nil {
			continue
		}
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(i),
			Total:         float64(steps),
			Message:       fmt.Sprintf("step %d/%d", i, steps),
		})
		if err != nil {
			t.opts.Logf("%s progress %d/%d tag=%q: %v", name, i, steps, in.Tag, err)
			continue
		}
		update(func(w *WorkState) { w.ProgressSent++ })
	}
	update(func(w *WorkState) { w.Finished = true })
	t.opts.Logf("%s done steps=%d tag=%q", name, steps, in.Tag)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
		Text: fmt.Sprintf("%s: completed %d steps of %d ms", name, steps, stepMs),
	}}}, nil, nil
}
