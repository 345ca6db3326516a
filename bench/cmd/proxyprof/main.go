// Command proxyprof is `mcp-conform proxy --url UPSTREAM --listen ADDR` (no
// rule, the same transcript limit) with a CPU and an allocation profile of
// the proxy alone, written when it gets SIGTERM or SIGINT: the proxy as its
// own process, under the load of bench/cmd/proxycmp, without the client
// and the upstream in the profile (the faultproxy Go benchmarks run all
// three in one process).
//
//	PROXYPROF_CPU=cpu.out PROXYPROF_MEM=mem.out PROXYPROF_STATS=gc.txt PROXYPROF_MUTEX=mutex.out proxyprof proxy --url http://127.0.0.1:PORT --listen 127.0.0.1:0
//	proxycmp compare -mcp-conform "$(command -v proxyprof)" -stdio=false …
//	go tool pprof -top proxyprof cpu.out
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"

	"github.com/mcp-conform/mcp-conform/faultproxy"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "proxy" {
		args = args[1:]
	}
	fs := flag.NewFlagSet("proxyprof", flag.ExitOnError)
	upstream := fs.String("url", "", "upstream MCP endpoint")
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	_ = fs.Parse(args)
	if err := run(*upstream, *listen); err != nil {
		fmt.Fprintln(os.Stderr, "proxyprof:", err)
		os.Exit(1)
	}
}

func run(upstream, listen string) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	if f := os.Getenv("PROXYPROF_CPU"); f != "" {
		out, err := os.Create(f)
		if err != nil {
			return err
		}
		defer out.Close()
		if err := pprof.StartCPUProfile(out); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if os.Getenv("PROXYPROF_MEM") != "" {
		runtime.MemProfileRate = 4096
	}
	if os.Getenv("PROXYPROF_MUTEX") != "" {
		runtime.SetMutexProfileFraction(1)
		runtime.SetBlockProfileRate(1000)
	}
	p, err := faultproxy.StartHTTP(context.Background(), faultproxy.HTTPOptions{Upstream: upstream, Listen: listen})
	if err != nil {
		return err
	}
	p.Transcript().SetLimit(4096) // as cmd/mcp-conform's proxy command
	fmt.Println(p.URL())
	<-sigs
	_ = p.Close()
	if f := os.Getenv("PROXYPROF_STATS"); f != "" {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		_ = os.WriteFile(f, fmt.Appendf(nil, "gc cycles %d, GC CPU fraction %.3f, heap in use %d KiB, allocated %d MiB in %d objects\n",
			ms.NumGC, ms.GCCPUFraction, ms.HeapInuse>>10, ms.TotalAlloc>>20, ms.Mallocs), 0o644)
	}
	for env, prof := range map[string]string{"PROXYPROF_MUTEX": "mutex", "PROXYPROF_BLOCK": "block"} {
		if f := os.Getenv(env); f != "" {
			if out, err := os.Create(f); err == nil {
				_ = pprof.Lookup(prof).WriteTo(out, 0)
				out.Close()
			}
		}
	}
	if f := os.Getenv("PROXYPROF_MEM"); f != "" {
		out, err := os.Create(f)
		if err != nil {
			return err
		}
		defer out.Close()
		return pprof.Lookup("allocs").WriteTo(out, 0)
	}
	return nil
}
