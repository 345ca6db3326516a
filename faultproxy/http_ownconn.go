package faultproxy

// OwnUpstreamConnections reports whether each client connection to the
// proxy gets an upstream connection of its own (an http:// upstream and no
// HTTPOptions.Transport, httpupstream.go): then a request on a new client
// connection reaches the server on a new TCP connection too. Otherwise
// exchanges go through a pooled http.Client.
func (p *HTTP) OwnUpstreamConnections() bool { return p.srv != nil && p.srv.up != nil }
