package runner

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/reports"
	"github.com/mcp-conform/mcp-conform/suites"
)

// probe asks each target, for every known version at once, whether it
// accepts that version (suites.AcceptsVersions) and plans a part per
// accepted version. A version whose probe failed for another reason than a
// refusal (the server did not start, crashed, hung) is planned too, so its
// checks report the failure with the evidence, as they would without the
// probe; when no version of a target was accepted and some probe failed,
// the target is planned once, unforced, exactly as a run that does not
// probe (its refusals are not reported: a broken server's answers are no
// evidence). A target that refused every version is not planned.
func probe(ctx context.Context, cfg *suites.Config) ([]part, []reports.TargetVersion) {
	vs := clients.KnownVersions
	out := make([][]error, len(cfg.Targets))
	var wg sync.WaitGroup
	for i, t := range cfg.Targets {
		wg.Go(func() { out[i] = suites.AcceptsVersions(ctx, cfg, t, vs) })
	}
	wg.Wait()
	var (
		parts    []part
		versions []reports.TargetVersion
	)
	for i, t := range cfg.Targets {
		var (
			planned, failed []part
			answers         []reports.TargetVersion
		)
		for j, v := range vs {
			switch err := out[i][j]; {
			case err == nil:
				planned = append(planned, part{base: i, spec: v})
				answers = append(answers, reports.TargetVersion{Transport: t.Transport, ProtocolVersion: v, Status: reports.Accepted})
			case errors.Is(err, clients.ErrNegotiation):
				answers = append(answers, reports.TargetVersion{Transport: t.Transport, ProtocolVersion: v, Status: reports.Refused, Reason: refusal(err)})
			default:
				failed = append(failed, part{base: i, spec: v})
			}
		}
		switch {
		case len(planned) == 0 && len(failed) > 0:
			// Nothing accepted and some probes failed: a target that
			// does not start or answer (a silent one looks like a
			// modern refusal too). Run it as a run that does not probe,
			// so every check says what went wrong.
			parts = append(parts, part{base: i})
			continue
		case len(failed) > 0:
			planned = append(planned, failed...)
			slices.SortStableFunc(planned, func(a, b part) int {
				return slices.Index(vs, a.spec) - slices.Index(vs, b.spec)
			})
		}
		parts = append(parts, planned...)
		versions = append(versions, answers...)
	}
	return parts, versions
}

// refusal is the reason of a refused version, without the wrapping every
// negotiation error carries.
func refusal(err error) string {
	s := err.Error()
	if i := strings.Index(s, clients.ErrNegotiation.Error()+": "); i >= 0 {
		s = s[i+len(clients.ErrNegotiation.Error())+2:]
	}
	return s
}
