package faultproxy

import (
	"io"
	"time"
)

// The client-gone watch of the proxy's HTTP/1.1 server (httpserve.go): an
// exchange older than watchAfter has its connection probed, without
// blocking, by the server's one watchLoop.

// eofHook arms the watch once its body has been read to the end.
type eofHook struct {
	rc   io.ReadCloser
	sc   *srvConn
	done bool
}

func (b *eofHook) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.sc.armWatch()
	}
	return n, err
}

func (b *eofHook) Close() error { return b.rc.Close() }

// armWatch lets the server's watchLoop watch the connection for the
// client going away, once the exchange has run for watchAfter or more:
// the request body has been read, and nothing else reads the connection
// until the exchange ends. Exchanges that end sooner (most) cost no watch
// at all.
func (sc *srvConn) armWatch() {
	// Bytes of a next request already read: the client is there.
	sc.pipelined.Store(sc.br.Buffered() > 0)
	sc.exch.Store(sc.n)
	s := sc.s
	s.armed.Add(1)
	if !s.looping.Load() && s.looping.CompareAndSwap(false, true) {
		go s.watchLoop()
	}
}

// watchLoop runs while exchanges are armed: every watchAfter it looks, for
// each exchange it saw armed at its earlier ticks too, whether the client
// closed its connection (clientGone: one non-blocking system call, no
// goroutine and no deadline per exchange), at ticks 1, 2, 4, 8 and 16 of
// the exchange and every 16th after: a client that goes away is seen
// within 5–80 ms. One loop for the whole server instead of a timer per
// exchange (resetting a timer can wake the network poller).
func (s *httpServer) watchLoop() {
	for {
		time.Sleep(watchAfter)
		if s.armed.Load() == 0 {
			s.looping.Store(false)
			if s.armed.Load() == 0 || !s.looping.CompareAndSwap(false, true) {
				return
			}
			continue
		}
		s.mu.Lock()
		for sc := range s.conns {
			e := sc.exch.Load()
			if e == 0 || e != sc.seen {
				sc.seen, sc.ticks = e, 0
				continue
			}
			sc.ticks++
			if t := sc.ticks; t&(t-1) == 0 && t <= watchEvery || t%watchEvery == 0 {
				sc.probe(e)
			}
		}
		s.mu.Unlock()
	}
}

// watchEvery is how many ticks apart an old exchange's connection is
// looked at.
const watchEvery = 16

// probe looks whether the client of exchange e closed its connection; if
// it did, the connection's context ends (as net/http cancels a request's
// when its client goes away) and the connection closes after the
// exchange. It looks under wmu, and only while e has not ended: endWatch
// takes wmu too, so the connection's goroutine cannot be reading again
// (the next request's first byte, a blocking read that holds the
// descriptor's read lock) while clientGone peeks. Peeking after the
// exchange ended would wait for that read — for an idle keep-alive
// connection, until its client writes or the server shuts down, while
// watchLoop holds the server's mu, which shutdown needs: a deadlock.
func (sc *srvConn) probe(e uint64) {
	if sc.pipelined.Load() {
		return
	}
	sc.wmu.Lock()
	ours := sc.exch.Load() == e && clientGone(sc.c) // not ended meanwhile
	if ours {
		sc.wgone = true
	}
	sc.wmu.Unlock()
	if ours {
		sc.cancel()
	}
}

// endWatch ends the watch of the exchange that ended and reports whether
// it saw the client go away. After it returns no probe of that exchange
// runs (see probe).
func (sc *srvConn) endWatch() (gone bool) {
	sc.wmu.Lock()
	if sc.exch.Swap(0) != 0 {
		sc.s.armed.Add(-1)
	}
	gone = sc.wgone
	sc.wmu.Unlock()
	return gone
}
