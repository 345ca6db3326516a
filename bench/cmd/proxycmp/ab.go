//go:build unix

package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// runAB compares two `mcp-conform proxy` binaries (say, of main and of a
// branch) in front of one echo server, in small blocks that alternate
// A B B A …, so that the machine's load, which moves from second to
// second, falls on both alike: each block is a few hundred milliseconds
// of one metric through one proxy, with that proxy's CPU time over it.
// It prints, per metric, each side's CPU per request (or event) over all
// its blocks, the median of the per-pair ratios B ÷ A, the p50 of the
// sequential round trips and the parallel callers' requests/s.
func runAB(args []string) error {
	fs := flag.NewFlagSet("ab", flag.ExitOnError)
	a := fs.String("a", "", "the first mcp-conform binary (the baseline)")
	b := fs.String("b", "", "the second mcp-conform binary")
	blocks := fs.Int("blocks", 20, "block pairs per metric")
	metrics := fs.String("metrics", "seq,par,sse", "of seq, par, sse")
	_ = fs.Parse(args)
	if *a == "" || *b == "" {
		return errors.New("ab: -a and -b are required")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "proxycmp-ab.")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	echoP, echoURL, err := start("echo", []string{self, "echo"}, nil, filepath.Join(dir, "echo.err"), 10*time.Second)
	if err != nil {
		return err
	}
	defer echoP.stop()
	var paths [2]httpPath
	for i, bin := range []string{*a, *b} {
		p, u, err := start("mcp-conform proxy", []string{bin, "proxy", "--url", echoURL + "/json", "--listen", "127.0.0.1:0"},
			nil, filepath.Join(dir, fmt.Sprintf("proxy%d.err", i)), 10*time.Second)
		if err != nil {
			return err
		}
		defer p.stop()
		pu, err := url.Parse(u)
		if err != nil || pu.Host == "" {
			return fmt.Errorf("%s printed %q, not a URL", bin, u)
		}
		paths[i] = httpPath{name: []string{"A", "B"}[i], base: "http://" + pu.Host, pid: p.pid()}
	}
	client := newClient(16)
	for _, p := range paths {
		if _, err := seqRoundTrips(client, p.base, 200); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	fmt.Printf("A = %s\nB = %s\n", *a, *b)
	for _, m := range strings.Split(*metrics, ",") {
		var cpu [2]time.Duration
		var n [2]int
		var lat [2][]time.Duration
		var wall [2]time.Duration // par: the blocks' wall time
		var ratios []float64
		for k := range *blocks {
			order := []int{0, 1}
			if k%2 == 1 {
				order = []int{1, 0}
			}
			var per [2]float64
			for _, i := range order {
				p := paths[i]
				var cnt int
				c, err := withCPU(p.pid, func() error {
					switch m {
					case "seq":
						l, err := seqRoundTrips(client, p.base, 300)
						lat[i] = append(lat[i], l...)
						cnt = len(l)
						return err
					case "par":
						var err error
						var el time.Duration
						cnt, el, err = parallel(client, p.base, 16, 200*time.Millisecond)
						wall[i] += el
						return err
					case "sse":
						_, err := streams(client, p.base, 5000, 1)
						cnt = 5000
						return err
					}
					return fmt.Errorf("unknown metric %q", m)
				})
				if err != nil {
					return fmt.Errorf("%s %s: %w", p.name, m, err)
				}
				cpu[i] += c
				n[i] += cnt
				per[i] = perReq(c, cnt)
			}
			if per[0] > 0 {
				ratios = append(ratios, per[1]/per[0])
			}
		}
		slices.Sort(ratios)
		line := fmt.Sprintf("%s: CPU µs per %s A %.2f, B %.2f; B ÷ A per block pair: median ×%.3f (%.2f–%.2f)",
			m, map[bool]string{true: "event", false: "request"}[m == "sse"], perReq(cpu[0], n[0]), perReq(cpu[1], n[1]),
			ratios[len(ratios)/2], ratios[0], ratios[len(ratios)-1])
		switch m {
		case "seq":
			line += fmt.Sprintf("; p50 µs A %.1f, B %.1f", us(pct(lat[0], 50)), us(pct(lat[1], 50)))
		case "par":
			line += fmt.Sprintf("; requests/s A %.0f, B %.0f", float64(n[0])/wall[0].Seconds(), float64(n[1])/wall[1].Seconds())
		}
		fmt.Println(line)
	}
	return nil
}
