//go:build unix

package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/benchwire"
)

// streamEvent is one 200-byte event of the /stream endpoint (that of
// faultproxy's streaming benchmark).
var streamEvent = benchwire.Event

// firstEventGap is how long /sse waits after its first event before its
// last: a proxy that holds the first event until more arrives (a timer, a
// buffer to fill, the next read) shows it in the time to first event.
const firstEventGap = time.Millisecond

// runEcho serves, on a loopback port it prints as http://ADDR:
//
//	POST /json    the request body echoed as an application/json answer
//	POST /sse     an event stream: the head, the body echoed as one event
//	              at once, then after firstEventGap a second event, end
//	GET  /stream?n=N  N events of 200 bytes, one write and flush each
//
// It exits on SIGTERM or SIGINT.
func runEcho(args []string) error {
	fs := flag.NewFlagSet("echo", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	_ = fs.Parse(args)
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(echo), ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("http://%s\n", ln.Addr())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-sigs; _ = srv.Close() }()
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}

func echo(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	switch r.URL.Path {
	case "/json":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	case "/sse":
		f := w.(http.Flusher)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		f.Flush()
		_, _ = fmt.Fprintf(w, "data: %s\n\n", body)
		f.Flush()
		time.Sleep(firstEventGap)
		_, _ = fmt.Fprintf(w, "data: %s\n\n", body)
		f.Flush()
	case "/stream":
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		benchwire.WriteEvents(w, streamEvent, n)
	default:
		http.NotFound(w, r)
	}
}
