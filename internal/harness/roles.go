package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
)

// validateRoles checks the mutation, lookup and handle roles against the
// tools the target lists: each tool exists, the key is a property of the
// mutation tool's input schema (and of the lookup's), the probe answers
// with a number, and the handle's param is a property of its use tool's
// input schema. It returns every problem found.
func validateRoles(ctx context.Context, d time.Duration, m *Manifest, e *Endpoint) error {
	mut, hasMut := m.Roles["mutation"]
	look, hasLook := m.Roles["lookup"]
	hd, hasHandle := m.Roles["handle"]
	if !hasMut && !hasLook && !hasHandle {
		return nil
	}
	tools, err := e.ListTools(ctx, d)
	if err != nil {
		return err
	}
	var problems []string
	need := func(role, name string) map[string]any {
		t, ok := FindTool(tools, name)
		if !ok {
			problems = append(problems, fmt.Sprintf("role %s: tool %q is not in tools/list (the target lists %s)", role, name, strings.Join(ToolNames(tools), ", ")))
		}
		return t
	}
	if hasMut {
		if t := need("mutation", mut.Tool); t != nil {
			if _, ok := SchemaProps(t)[mut.Key]; !ok {
				problems = append(problems, fmt.Sprintf("role mutation: key argument %q is not a property of %s's inputSchema", mut.Key, mut.Tool))
			}
		}
		if p, err := mut.MutationProbe(); err != nil {
			problems = append(problems, "role mutation: "+err.Error())
		} else if need("mutation probe", p.Tool) != nil {
			if _, _, err := e.Count(ctx, d, mut, NewKey("validate")); err != nil {
				problems = append(problems, fmt.Sprintf("role mutation: probe %s does not return a number in %q: %v", p.Tool, p.Field, err))
			}
		}
	}
	if hasLook {
		if t := need("lookup", look.Tool); t != nil && hasMut {
			if _, ok := SchemaProps(t)[mut.Key]; !ok {
				problems = append(problems, fmt.Sprintf("role lookup: the key argument %q is not a property of %s's inputSchema", mut.Key, look.Tool))
			}
		}
	}
	if hasHandle {
		need("handle", hd.Tool)
		if t := need("handle use", hd.Use); t != nil {
			if _, ok := SchemaProps(t)[hd.Param]; !ok {
				problems = append(problems, fmt.Sprintf("role handle: param %q is not a property of %s's inputSchema", hd.Param, hd.Use))
			}
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// ValidateRoles starts each target that declares a mutation, lookup or
// handle role and checks those roles against what it serves (validateRoles), before
// any check runs: a bad manifest is a usage error, not a run of SKIPs.
func ValidateRoles(ctx context.Context, c *Config) error {
	cfg := c.WithDefaults()
	seen := map[string]bool{}
	for _, t := range cfg.Targets {
		_, mut := t.Roles["mutation"]
		_, look := t.Roles["lookup"]
		_, handle := t.Roles["handle"]
		if !mut && !look && !handle || seen[t.Name+t.Transport] {
			continue
		}
		seen[t.Name+t.Transport] = true
		if err := validateTarget(ctx, cfg, t); err != nil {
			return fmt.Errorf("manifest %s (%s): %w", t.Name, t.Transport, err)
		}
	}
	return nil
}

func validateTarget(ctx context.Context, cfg *Config, t *Manifest) error {
	sctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	c, err := transportOf(t).Dial(sctx, cfg, t, clients.Session{})
	if err != nil {
		return fmt.Errorf("start the target to validate its roles: %w", err)
	}
	defer c.Close()
	e := c.Endpoint
	return validateRoles(ctx, cfg.CallTimeout, t, e)
}
