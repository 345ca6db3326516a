//go:build !windows

package faultproxy

import (
	"bufio"
	"context"
	"net"
	"testing"
	"time"
)

// TestProbeAfterEndDoesNotWait: a probe of an exchange that ended while
// the watch loop was about to look at it returns at once, although the
// connection's goroutine is already reading the next request (a blocking
// read, holding the descriptor's read lock): before, its peek waited for
// that read — with the server's mu held, which shutdown needs.
func TestProbeAfterEndDoesNotWait(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc := &srvConn{s: &httpServer{}, c: server, br: bufio.NewReader(server), ctx: ctx, cancel: cancel}
	sc.n = 1
	sc.armWatch()
	if sc.endWatch() {
		t.Fatal("the client is there, the watch says it went away")
	}
	// The connection's goroutine reads the next request's first byte.
	reading := make(chan struct{})
	read := make(chan error, 1)
	go func() {
		close(reading)
		var b [1]byte
		_, err := server.Read(b[:])
		read <- err
	}()
	<-reading
	time.Sleep(20 * time.Millisecond) // let the read block in the poller (not a synchronisation: the probe must return either way)

	probed := make(chan struct{})
	go func() {
		sc.probe(1) // the exchange the loop saw armed, now ended
		close(probed)
	}()
	select {
	case <-probed:
	case <-time.After(2 * time.Second):
		t.Fatal("a probe of an ended exchange waited for the connection's next read")
	}
	if ctx.Err() != nil {
		t.Error("a probe of an ended exchange cancelled the connection")
	}
	_ = client.Close()
	select {
	case <-read:
	case <-time.After(2 * time.Second):
		t.Fatal("the reader did not see the client close")
	}
}
