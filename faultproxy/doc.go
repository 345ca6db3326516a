// Package faultproxy is the fault-injection engine of mcp-conform: it stands
// between an MCP client and the server under test, frames the traffic into
// JSON-RPC messages, records every message in a transcript and applies
// faults (drop, delay, hold-until, duplicate, inject, crash, pause, and on
// HTTP cut, reset, buffer, throttle, status) chosen by rules. With no rule
// active it is byte-transparent and keeps order.
//
// The shape follows Shopify's toxiproxy: a link carries messages both ways,
// a Rule is a Match and a Fault, and each fault is a small type with one
// method (Fault.Apply) in a file of its own that ends with its
// RegisterFault: its name, the rule-file keys it reads, and the
// capabilities it needs (CapProcess) or uses (CapStream).
//
// The path of one message, on every transport (Link on stdio, HTTP on
// Streamable HTTP, WebSocket):
//
//	client                          proxy link                          server
//	  |  frame   +------------------------------------------------+       |
//	  |--------->| pump / ServeHTTP: frame -> Message (Seq, Dir)  |       |
//	  |          |     |                                          |       |
//	  |          |     +--> Transcript: message entry             |       |
//	  |          |     v                                          |       |
//	  |          | Rules.evaluate: Match, After, Nth, Times,      |       |
//	  |          |     |           Probability (first rule fires) |       |
//	  |          |  none fires            a rule fires            |       |
//	  |          |     |                      v                   |       |
//	  |          |     |        Fault.Apply(ctx, Conduit, msg):   |       |
//	  |          |     |        Deliver, Inject, Go, WaitPassed,  |       |
//	  |          |     |        Signal, Stream, Record ---------------> Transcript:
//	  |          |     |                      |                   |  fault entry
//	  |          |     v                      v                   |  with outcome
//	  |          | sink.deliver: stdio pipe, HTTP exchange        | frame |
//	  |          | (relay, StreamControl), WebSocket conn --------|------>|
//	  |          |     +--> markPassed (what hold-until waits on) |       |
//	  |          +------------------------------------------------+       |
//	  |<----------------- the same path, ServerToClient -------------------|
//
// On HTTP the proxy serves HTTP/1.1 itself (httpserve.go, httpresponse.go,
// httpwatch.go) and forwards
// each exchange on an upstream connection of the client connection's own
// (httpupstream.go): an exchange runs on one goroutine, with no
// net/http.Transport in between and no context.WithCancel of its own
// (httpctx.go); its request is written in one write and its answer awaited
// without a read that finds nothing yet, its connections read and written
// with raw system calls that do not wake the runtime's sysmon thread
// (rawio_linux.go); plain heads are read by a fast
// path (httphead.go) that reads what http.ReadRequest/ReadResponse would.
//
// A fault that waits (delay, hold-until, barrier, pause) starts its work
// with Conduit.Go, so the pump never blocks; the link's context ends such
// work when the link closes, and a fault that held a message records that
// it was dropped with the link. Every fault entry names the message by Dir, Seq and
// Stream and says in Outcome what became of it, so a reader of the
// transcript (the report's sequence diagram) needs no sentence to tell.
package faultproxy
