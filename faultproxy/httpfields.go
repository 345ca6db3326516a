package faultproxy

import (
	"net/http"
	"strings"
)

// Header field helpers shared by the proxy's HTTP/1.1 server (httpserve.go,
// httpresponse.go) and its upstream connections (httpupstream.go).

// headerHas reports whether a value of h's field key is token (ASCII
// case-insensitively).
func headerHas(h http.Header, key, token string) bool {
	for _, v := range h[key] {
		if asciiEqualFold(v, token) {
			return true
		}
	}
	return false
}

// asciiEqualFold is strings.EqualFold for ASCII.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// hopHeader reports whether k is one of hopHeaders: never relayed.
func hopHeader(k string) bool {
	switch k {
	case "Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer",
		"Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

func validHeaderKey(k string) bool {
	if k == "" {
		return false
	}
	for i := range len(k) {
		c := k[i]
		if c <= ' ' || c == ':' || c >= 0x7f {
			return false
		}
	}
	return true
}

// appendHeaderLines appends a "Name: value\r\n" line per value of h,
// leaving out the names skip reports and those that are not valid field
// names.
func appendHeaderLines(b []byte, h http.Header, skip func(k string) bool) []byte {
	for k, vs := range h {
		if skip(k) || !validHeaderKey(k) {
			continue
		}
		for _, v := range vs {
			b = append(b, k...)
			b = append(b, ": "...)
			b = appendHeaderValue(b, v)
			b = append(b, "\r\n"...)
		}
	}
	return b
}

// appendHeaderValue appends v with line breaks turned into spaces (as
// net/http writes header values).
func appendHeaderValue(b []byte, v string) []byte {
	if strings.IndexByte(v, '\r') < 0 && strings.IndexByte(v, '\n') < 0 {
		return append(b, v...)
	}
	for i := range len(v) {
		c := v[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return b
}
