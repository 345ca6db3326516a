package harness

import (
	"context"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/faultproxy"
)

// AcceptsVersions starts target as a check would and negotiates each of
// versions with it, forced (server/discover for a modern version,
// initialize for a legacy one, which the server must answer with that
// version), all at once: one server process per version on stdio and
// WebSocket (a process serves one session there), one process for them all
// on Streamable HTTP (a session each). It returns one error per version:
// nil means the server accepts it; an error wrapping clients.ErrNegotiation
// means it refused it; any other error is a failure to start or reach the
// target. It is the runner's hook to plan one target per version the
// server accepts.
func AcceptsVersions(ctx context.Context, cfg *Config, target *Manifest, versions []string) []error {
	cfg = cfg.WithDefaults()
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	errs := make([]error, len(versions))
	negotiate := func(i int, start func(t *Manifest) error) {
		t := *target
		t.Spec = versions[i]
		errs[i] = start(&t)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	if !transportOf(target).SharedProcess {
		for i := range versions {
			wg.Go(func() {
				negotiate(i, func(t *Manifest) error {
					c, err := startConn(ctx, cfg, t, nil, clients.Session{}, nil)
					if err == nil {
						c.Close()
					}
					return err
				})
			})
		}
		return errs
	}
	t, cleanup, err := expandTarget(target, nil)
	if err != nil {
		return fill(errs, err)
	}
	defer cleanup()
	tr := faultproxy.NewTranscript(nil)
	proc, endpoint, err := startTargetProcess(ctx, cfg, t, tr)
	if err != nil {
		return fill(errs, withTranscript(err, tr))
	}
	if proc != nil {
		defer proc.Close(2 * time.Second)
	}
	for i := range versions {
		wg.Go(func() {
			negotiate(i, func(tv *Manifest) error {
				tv.URL = endpoint
				w := clients.NewHTTPWire(endpoint, directHTTPOptions(cfg, t))
				defer w.Close()
				return settle(ctx, w, cfg, tv, clients.Session{})
			})
		})
	}
	wg.Wait()
	return errs
}

func fill(errs []error, err error) []error {
	for i := range errs {
		errs[i] = err
	}
	return errs
}
