package draft

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
)

// sample returns a value p's schema accepts, with a note for the user when
// it is a guess the schema does not settle (a pattern, an empty list).
func sample(p Prop) (any, string) {
	switch {
	case len(p.Enum) > 0:
		return p.Enum[0], ""
	case p.HasDefault:
		return p.Default, ""
	}
	switch p.Type {
	case "integer", "number":
		v := 1.0
		if p.Minimum != nil && v < *p.Minimum {
			v = *p.Minimum
		}
		if p.Maximum != nil && v > *p.Maximum {
			v = *p.Maximum
		}
		if p.Type == "integer" {
			return int64(math.Ceil(v)), ""
		}
		return v, ""
	case "boolean":
		return false, ""
	case "array":
		return []any{}, fmt.Sprintf("%s is an empty list", p.Name)
	case "object":
		return map[string]any{}, fmt.Sprintf("%s is an empty object", p.Name)
	}
	s := "mcp-conform draft"
	switch strings.ToLower(p.Format) {
	case "date-time":
		s = "2025-01-01T00:00:00Z"
	case "date":
		s = "2025-01-01"
	case "email":
		s = "mcp-conform@example.com"
	case "uri", "url", "iri":
		s = "https://example.com/mcp-conform"
	case "uuid":
		s = "00000000-0000-4000-8000-000000000000"
	}
	if p.MinLength != nil && len(s) < *p.MinLength {
		s += strings.Repeat("x", *p.MinLength-len(s))
	}
	if p.MaxLength != nil && *p.MaxLength >= 0 && len(s) > *p.MaxLength {
		s = s[:*p.MaxLength]
	}
	note := ""
	if p.Pattern != "" {
		if re, err := regexp.Compile(p.Pattern); err != nil || !re.MatchString(s) {
			note = fmt.Sprintf("%s must match the pattern %s", p.Name, p.Pattern)
		}
	}
	if p.Type != "string" && p.Type != "" {
		note = fmt.Sprintf("%s is of type %s", p.Name, p.Type)
	}
	return s, note
}

// fillRequired gives every required property of t not in skip a sample
// value; it returns the arguments and the notes of guesses.
func fillRequired(t Tool, skip ...string) (map[string]any, []string) {
	args := map[string]any{}
	var notes []string
	for _, p := range t.Input {
		if !p.Required || slices.Contains(skip, p.Name) {
			continue
		}
		v, note := sample(p)
		args[p.Name] = v
		if note != "" {
			notes = append(notes, note)
		}
	}
	return args, notes
}

// timing is how a tool's call is made to last: a duration argument (its
// unit, whether it is one step's or the whole call's) and a steps
// argument, either of which may be missing.
type timing struct {
	timeArg, stepsArg string
	unit              string // "ms" or "s"
	perStep           bool
	// guessed is set when neither the name nor the description gave the
	// unit.
	guessed bool
}

// timingOf finds the duration-like and steps-like arguments of t; ok is
// false when it has neither a duration nor, with a description that says
// it takes time, a steps argument.
func timingOf(t Tool) (timing, bool) {
	var tm timing
	for _, p := range t.Input {
		if !numeric(p.Type) {
			continue
		}
		ws := words(p.Name)
		if hasWord(ws, notDuration...) {
			continue
		}
		isTime := hasWord(ws, msWords...) || hasWord(ws, secWords...) || hasWord(ws, timeWords...)
		switch {
		case isTime && tm.timeArg == "":
			tm.timeArg = p.Name
			tm.unit, tm.guessed = unitOf(p, ws)
			desc := strings.ToLower(p.Description)
			tm.perStep = hasWord(ws, perStepWords...) || mentions(desc, "per step", "each step", "between steps", "between progress")
		case !isTime && hasWord(ws, stepsWords...) && tm.stepsArg == "":
			tm.stepsArg = p.Name
		}
	}
	if tm.timeArg == "" {
		return tm, false
	}
	if tm.stepsArg == "" {
		tm.perStep = false
	}
	return tm, true
}

var msRe = regexp.MustCompile(`\bms\b|millisecond`)

// unitOf reads a duration's unit from its name's words, its description,
// and last its default (>= 100: milliseconds).
func unitOf(p Prop, ws []string) (unit string, guessed bool) {
	switch {
	case hasWord(ws, msWords...):
		return "ms", false
	case hasWord(ws, secWords...):
		return "s", false
	}
	d := strings.ToLower(p.Description)
	switch {
	case msRe.MatchString(d):
		return "ms", false
	case strings.Contains(d, "second"):
		return "s", false
	}
	if f, ok := p.Default.(float64); ok && f >= 100 {
		return "ms", true
	}
	return "s", true
}

// args are the timing's arguments for a call of about total over steps
// steps (when the tool counts steps), within the schema's bounds, and a
// description such as "6 steps of 150 ms, about 0.9 s".
func (tm timing) args(t Tool, total time.Duration, steps int) (map[string]any, string) {
	args := map[string]any{}
	n := 1
	if tm.stepsArg != "" {
		p, _ := t.Prop(tm.stepsArg)
		n = int(clamp(float64(steps), p))
		args[tm.stepsArg] = int64(n)
	}
	p, _ := t.Prop(tm.timeArg)
	d := total
	if tm.perStep {
		d = total / time.Duration(n)
	}
	var v float64
	if tm.unit == "ms" {
		v = float64(d.Milliseconds())
	} else {
		v = d.Seconds()
	}
	if p.Type == "integer" {
		v = math.Max(1, math.Round(v))
	}
	v = clamp(v, p)
	if p.Type == "integer" {
		args[tm.timeArg] = int64(v)
	} else {
		args[tm.timeArg] = v
	}
	// What the call will take, from the values written.
	per := v
	if tm.unit == "s" {
		per *= 1000
	}
	whole := per
	if tm.perStep {
		whole = per * float64(n)
	}
	var desc string
	switch {
	case tm.stepsArg != "" && tm.perStep:
		desc = fmt.Sprintf("%d steps of %s, about %s", n, ms(per), ms(whole))
	case tm.stepsArg != "":
		desc = fmt.Sprintf("%d steps over %s", n, ms(whole))
	default:
		desc = "about " + ms(whole)
	}
	return args, desc
}

// clamp bounds v by p's minimum and maximum.
func clamp(v float64, p Prop) float64 {
	if p.Minimum != nil && v < *p.Minimum {
		v = *p.Minimum
	}
	if p.Maximum != nil && v > *p.Maximum {
		v = *p.Maximum
	}
	return v
}

// ms formats milliseconds: "150 ms", "0.9 s".
func ms(v float64) string {
	if v < 1000 {
		return fmt.Sprintf("%g ms", v)
	}
	return fmt.Sprintf("%g s", math.Round(v/100)/10)
}
