package suites

import (
	"context"

	"github.com/mcp-conform/mcp-conform/clients"
)

// AcceptsVersion starts target as a check would, negotiates protocol
// version v (forced: server/discover for a modern version, initialize for a
// legacy one, which the server must answer with v) and stops it. nil means
// the server accepts v; an error wrapping clients.ErrNegotiation means it
// refused v; any other error is a failure to start or reach the target. It
// is the runner's hook to plan one target per version the server accepts.
func AcceptsVersion(ctx context.Context, cfg *Config, target *Manifest, v string) error {
	cfg = cfg.withDefaults()
	t := *target
	t.Spec = v
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	if t.Transport == "http" {
		c, err := startHTTPConn(ctx, cfg, &t, nil, clients.Session{}, nil)
		if err != nil {
			return err
		}
		c.close()
		return nil
	}
	c, err := startConn(ctx, cfg, &t, nil, clients.Session{}, nil)
	if err != nil {
		return err
	}
	c.close()
	return nil
}
