//go:build unix

// Command proxycmp measures, in one run, the cost of an HTTP request and of
// a stdio line through three paths side by side: direct, through an L4
// proxy (toxiproxy, no toxics) and through `mcp-conform proxy` (no rule),
// against the same Go echo server and with the same client. bench/compare.sh
// builds the pieces and runs it; it writes a Markdown table (ratios to
// direct, medians of the rounds with min–max) and the raw samples as JSON.
//
//	proxycmp echo                    the echo server (prints its URL)
//	proxycmp relay -- CMD [ARGS...]  a plain Go line relay in front of CMD
//	proxycmp compare -toxiproxy BIN -mcp-conform BIN [-rounds N] [-budget D] [-md FILE] [-json FILE]
//	proxycmp ab -a BIN -b BIN [-blocks N] [-metrics seq,par,sse]   two mcp-conform builds, A B B A …
//
// The three paths are measured alternately (direct, toxiproxy, mcp-conform,
// direct, …) metric by metric within each round, so that a change in the
// machine's load hits all three alike; each ratio is taken within one round
// and the table gives the median of the rounds' ratios.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "echo":
		err = runEcho(os.Args[2:])
	case "relay":
		err = runRelay(os.Args[2:])
	case "compare":
		err = runCompare(os.Args[2:])
	case "ab":
		err = runAB(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "proxycmp:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage:
  proxycmp echo [-listen ADDR]
  proxycmp relay -- CMD [ARGS...]
  proxycmp compare -toxiproxy BIN -mcp-conform BIN [-rounds N] [-budget D] [-md FILE] [-json FILE]
  proxycmp ab -a BIN -b BIN [-blocks N] [-metrics seq,par,sse]`)
	os.Exit(2)
}
