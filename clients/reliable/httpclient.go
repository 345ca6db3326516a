package reliable

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/mcp-conform/mcp-conform/protocol"
)

// HTTPClientOptions configures NewHTTPClient.
type HTTPClientOptions struct {
	// Tap, when set, records the requests POSTed.
	Tap *Tap
	// Defect: the HTTP client acts on NoProtocolVersionHeader and
	// NoMethodHeaders (it strips the headers the wire client computed).
	Defect Defect
}

// NewHTTPClient returns the http.Client a reliable client's HTTPWire sends
// with (clients.HTTPOptions.Client): no overall timeout (streams are long;
// the request coordinator's clocks bound the calls), no redirects, and the
// tap and defects of opts.
func NewHTTPClient(opts HTTPClientOptions) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	base := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           d.DialContext,
		ResponseHeaderTimeout: 60 * time.Second,
		IdleConnTimeout:       30 * time.Second,
		MaxIdleConnsPerHost:   8,
		DisableCompression:    true,
	}
	return &http.Client{
		Transport:     tapTransport{base: base, opts: opts},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

type tapTransport struct {
	base *http.Transport
	opts HTTPClientOptions
}

func (t tapTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	tapped := -1
	if t.opts.Tap != nil && r.Body != nil && r.Method == http.MethodPost {
		b, err := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if err != nil {
			return nil, err
		}
		tapped = t.opts.Tap.Body(b)
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(b))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
		defer func() { t.opts.Tap.Arrived(tapped) }()
	}
	switch t.opts.Defect {
	case NoProtocolVersionHeader:
		r = r.Clone(r.Context())
		r.Header.Del(protocol.HeaderProtocolVersion)
	case NoMethodHeaders:
		r = r.Clone(r.Context())
		r.Header.Del(protocol.HeaderMethod)
		r.Header.Del(protocol.HeaderName)
	}
	return t.base.RoundTrip(r)
}

// CloseIdleConnections closes the idle keep-alive connections.
func (t tapTransport) CloseIdleConnections() { t.base.CloseIdleConnections() }
