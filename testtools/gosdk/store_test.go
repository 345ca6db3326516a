package gosdk

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// stores are the Store implementations of this package, each opened anew.
var stores = []struct {
	name string
	open func(t *testing.T, lease time.Duration) Store
}{
	{"memory", func(_ *testing.T, lease time.Duration) Store { return &MemoryStore{Lease: lease} }},
	{"file", func(t *testing.T, lease time.Duration) Store {
		s, err := OpenFileStore(filepath.Join(t.TempDir(), "store.json"))
		if err != nil {
			t.Fatal(err)
		}
		s.Lease = lease
		return s
	}},
}

// TestStoreContract: the rules every Store keeps, on both of this package's.
func TestStoreContract(t *testing.T) {
	ctx := context.Background()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Run("one winner of concurrent claims", func(t *testing.T) {
				s := st.open(t, time.Hour)
				var wg sync.WaitGroup
				var mu sync.Mutex
				won := 0
				for range 16 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						c, err := s.Claim(ctx, "k", "fp")
						if err != nil {
							t.Error(err)
							return
						}
						if c.Won {
							mu.Lock()
							won++
							mu.Unlock()
						} else if c.Record.State != StateClaimed || c.Record.Fingerprint != "fp" {
							t.Errorf("a losing claim saw %+v", c.Record)
						}
					}()
				}
				wg.Wait()
				if won != 1 {
					t.Errorf("%d claims won, want 1", won)
				}
			})
			t.Run("commit once, then the record", func(t *testing.T) {
				s := st.open(t, time.Hour)
				c, _ := s.Claim(ctx, "k", "fp")
				if r, ok, _ := s.Lookup(ctx, "k"); !ok || r.State != StateClaimed || r.Executions != 0 {
					t.Errorf("claimed: %+v %v", r, ok)
				}
				if n, _ := s.Executions(ctx, "k"); n != 0 {
					t.Errorf("%d executions before the commit", n)
				}
				if err := s.Commit(ctx, c, json.RawMessage(`{"r":1}`)); err != nil {
					t.Fatal(err)
				}
				if err := s.Commit(ctx, c, json.RawMessage(`{"r":2}`)); !errors.Is(err, ErrClaimLost) {
					t.Errorf("a second commit of one claim: %v", err)
				}
				r, ok, _ := s.Lookup(ctx, "k")
				if !ok || r.State != StateCommitted || string(r.Result) != `{"r":1}` || r.Executions != 1 {
					t.Errorf("committed: %+v", r)
				}
				again, _ := s.Claim(ctx, "k", "fp")
				if again.Won || string(again.Record.Result) != `{"r":1}` {
					t.Errorf("a claim of a committed key: %+v", again)
				}
				other, _ := s.Claim(ctx, "k", "other")
				if other.Won || other.Record.Fingerprint != "fp" {
					t.Errorf("a claim with another fingerprint: %+v", other)
				}
				c2, _ := s.Claim(ctx, "k2", "fp")
				_ = s.Commit(ctx, c2, json.RawMessage(`{}`))
				if n, _ := s.Executions(ctx, ""); n != 2 {
					t.Errorf("total %d, want 2", n)
				}
				if n, _ := s.Executions(ctx, "none"); n != 0 {
					t.Errorf("unknown key: %d", n)
				}
				if _, ok, _ := s.Lookup(ctx, "none"); ok {
					t.Error("unknown key found")
				}
			})
			t.Run("stale claim taken over with the same fingerprint only", func(t *testing.T) {
				s := st.open(t, time.Nanosecond)
				old, _ := s.Claim(ctx, "k", "fp")
				time.Sleep(time.Millisecond) // past the 1 ns lease
				if c, _ := s.Claim(ctx, "k", "other"); c.Won {
					t.Error("a stale claim was taken over with another fingerprint")
				}
				c, _ := s.Claim(ctx, "k", "fp")
				if !c.Won || c.Token == old.Token {
					t.Fatalf("stale claim not taken over: %+v", c)
				}
				if err := s.Commit(ctx, old, json.RawMessage(`{}`)); !errors.Is(err, ErrClaimLost) {
					t.Errorf("the old owner's commit: %v", err)
				}
				if err := s.Commit(ctx, c, json.RawMessage(`{"new":1}`)); err != nil {
					t.Fatal(err)
				}
				if n, _ := s.Executions(ctx, "k"); n != 1 {
					t.Errorf("%d executions, want 1", n)
				}
			})
		})
	}
}

// The helper process: the test binary run again with helperEnv set, doing
// one store operation named by its arguments.
const helperEnv = "TESTTOOLS_STORE_HELPER"

func TestMain(m *testing.M) {
	if args := os.Getenv(helperEnv); args != "" {
		os.Exit(helper(strings.Fields(args)))
	}
	os.Exit(m.Run())
}

// helper runs: "race PATH KEY" (claim, and commit when won; prints won or
// lost), "commit-and-hang PATH KEY" (commits, prints committed, waits to be
// killed), "lock-and-hang PATH" (takes the file lock, prints locked, waits).
func helper(args []string) int {
	ctx := context.Background()
	s, err := OpenFileStore(args[1])
	if err != nil {
		fmt.Println(err)
		return 1
	}
	switch args[0] {
	case "race":
		c, err := s.Claim(ctx, args[2], "fp")
		if err != nil {
			fmt.Println(err)
			return 1
		}
		if !c.Won {
			fmt.Println("lost")
			return 0
		}
		if err := s.Commit(ctx, c, json.RawMessage(`{"pid":`+strconv.Itoa(os.Getpid())+`}`)); err != nil {
			fmt.Println(err)
			return 1
		}
		fmt.Println("won")
	case "commit-and-hang":
		c, err := s.Claim(ctx, args[2], "fp")
		if err == nil {
			err = s.Commit(ctx, c, json.RawMessage(`{"before":"the kill"}`))
		}
		if err != nil {
			fmt.Println(err)
			return 1
		}
		fmt.Println("committed")
		select {}
	case "lock-and-hang":
		if _, err := lockPath(ctx, s.path+".lock"); err != nil {
			fmt.Println(err)
			return 1
		}
		fmt.Println("locked")
		select {}
	}
	return 2
}

// startHelper starts the helper; the first line it prints comes on the
// returned channel.
func startHelper(t *testing.T, args ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+strings.Join(args, " "))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(l)
	}()
	return cmd, line
}

func firstLine(t *testing.T, line <-chan string) string {
	t.Helper()
	select {
	case l := <-line:
		return l
	case <-time.After(20 * time.Second):
		t.Fatal("the helper printed nothing within 20 s")
		return ""
	}
}

// TestFileStoreProcesses: processes sharing one file race a key (exactly one
// executes); a process SIGKILLed right after its commit returned left the
// result behind; a process killed holding the lock does not block the next.
func TestFileStoreProcesses(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the helpers are killed with SIGKILL")
	}
	ctx := context.Background()
	t.Run("race", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "store.json")
		var lines []<-chan string
		for range 6 {
			_, l := startHelper(t, "race", path, "raced-key")
			lines = append(lines, l)
		}
		won := 0
		for _, l := range lines {
			switch got := firstLine(t, l); got {
			case "won":
				won++
			case "lost":
			default:
				t.Errorf("helper: %s", got)
			}
		}
		s, _ := OpenFileStore(path)
		n, _ := s.Executions(ctx, "raced-key")
		if won != 1 || n != 1 {
			t.Errorf("%d processes won, %d executions; want 1 and 1", won, n)
		}
	})
	t.Run("kill after commit", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "store.json")
		cmd, l := startHelper(t, "commit-and-hang", path, "killed-key")
		if got := firstLine(t, l); got != "committed" {
			t.Fatalf("helper: %s", got)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		s, _ := OpenFileStore(path)
		r, ok, err := s.Lookup(ctx, "killed-key")
		if err != nil || !ok || r.State != StateCommitted || string(r.Result) != `{"before":"the kill"}` || r.Executions != 1 {
			t.Errorf("after the kill: %+v %v %v", r, ok, err)
		}
		if c, _ := s.Claim(ctx, "killed-key", "fp"); c.Won {
			t.Error("the committed key was claimed again")
		}
	})
	t.Run("kill holding the lock", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "store.json")
		cmd, l := startHelper(t, "lock-and-hang", path)
		if got := firstLine(t, l); got != "locked" {
			t.Fatalf("helper: %s", got)
		}
		s, _ := OpenFileStore(path)
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if _, err := s.Claim(short, "k", "fp"); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a claim while another process holds the lock: %v", err)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		bounded, cancel2 := context.WithTimeout(ctx, 10*time.Second)
		defer cancel2()
		if c, err := s.Claim(bounded, "k", "fp"); err != nil || !c.Won {
			t.Errorf("a claim after the holder died: %+v %v", c, err)
		}
	})
}
