package control

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Listener is a running control API.
type Listener struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// Listen serves the API for opts on addr ("127.0.0.1:0" picks a free
// port). A non-loopback addr is refused unless opts.AllowRemote is set.
func Listen(addr string, opts Options) (*Listener, error) {
	if !opts.AllowRemote {
		if err := CheckLoopback(addr); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("control API: listen %s: %w", addr, err)
	}
	l := &Listener{
		srv:  &http.Server{Handler: New(opts), ReadHeaderTimeout: 10 * time.Second},
		ln:   ln,
		done: make(chan struct{}),
	}
	go func() {
		defer close(l.done)
		_ = l.srv.Serve(ln)
	}()
	return l, nil
}

// URL is the API's base URL, e.g. http://127.0.0.1:8474.
func (l *Listener) URL() string { return "http://" + l.ln.Addr().String() }

// Close stops the API, waiting (bounded) for requests in progress.
func (l *Listener) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := l.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, l.srv.Close())
	}
	<-l.done
	return err
}

// CheckLoopback refuses an address whose host is not a loopback name or
// address: the API has no authentication, so it must not reach the
// network by accident.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("control address %q: %w", addr, err)
	}
	if !isLoopback(host) {
		return fmt.Errorf("control address %q is not a loopback address (the control API has no authentication)", addr)
	}
	return nil
}
