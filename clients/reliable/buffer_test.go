package reliable

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func progress(token string, v int) Item {
	return ItemOf(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%q,"progress":%d}}`, token, v))
}

func final(id int) Item {
	return ItemOf(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{}}`, id))
}

func TestBuffer(t *testing.T) {
	t.Run("coalesces adjacent progress for the same token", func(t *testing.T) {
		b := NewBuffer(4)
		for v := 1; v <= 10; v++ {
			if err := b.Push(progress("a", v)); err != nil {
				t.Fatal(err)
			}
		}
		if b.Len() != 1 || b.Coalesced() != 9 || b.NeedsRefetch() {
			t.Fatalf("len %d coalesced %d refetch %v", b.Len(), b.Coalesced(), b.NeedsRefetch())
		}
		it, _ := b.Pop()
		if string(it.Raw) != string(progress("a", 10).Raw) {
			t.Fatalf("kept %s, want the newest", it.Raw)
		}
	})
	t.Run("different tokens do not coalesce", func(t *testing.T) {
		b := NewBuffer(4)
		_ = b.Push(progress("a", 1))
		_ = b.Push(progress("b", 1))
		_ = b.Push(progress("a", 2))
		if b.Len() != 3 || b.Coalesced() != 0 {
			t.Fatalf("len %d coalesced %d", b.Len(), b.Coalesced())
		}
	})
	t.Run("drops the oldest progress at capacity and marks a refetch", func(t *testing.T) {
		b := NewBuffer(3)
		_ = b.Push(progress("a", 1))
		_ = b.Push(final(1))
		_ = b.Push(progress("b", 1))
		if err := b.Push(progress("c", 1)); err != nil {
			t.Fatal(err)
		}
		if !b.NeedsRefetch() || b.Evicted() != 1 || b.Len() != 3 {
			t.Fatalf("refetch %v evicted %d len %d", b.NeedsRefetch(), b.Evicted(), b.Len())
		}
		var order []Kind
		for {
			it, ok := b.Pop()
			if !ok {
				break
			}
			order = append(order, it.Kind)
		}
		if fmt.Sprint(order) != fmt.Sprint([]Kind{Final, Progress, Progress}) {
			t.Fatalf("kept %v: the oldest progress should have gone, the final stayed", order)
		}
	})
	t.Run("never drops a final response", func(t *testing.T) {
		b := NewBuffer(2)
		_ = b.Push(progress("a", 1))
		_ = b.Push(progress("b", 1))
		for id := 1; id <= 2; id++ {
			if err := b.Push(final(id)); err != nil {
				t.Fatal(err)
			}
		}
		if b.Len() != 2 || b.Evicted() != 2 {
			t.Fatalf("len %d evicted %d", b.Len(), b.Evicted())
		}
		// Full of finals: progress is what goes, not a final.
		if err := b.Push(progress("c", 1)); err != nil || b.Len() != 2 || b.Evicted() != 3 {
			t.Fatalf("progress into a buffer of finals: %v len %d", err, b.Len())
		}
	})
	t.Run("refuses to keep one final by dropping another", func(t *testing.T) {
		b := NewBuffer(2)
		_ = b.Push(final(1))
		_ = b.Push(final(2))
		if err := b.Push(final(3)); !errors.Is(err, ErrFinalOverflow) {
			t.Fatalf("err %v, want ErrFinalOverflow", err)
		}
		a, _ := b.Pop()
		c, _ := b.Pop()
		if string(a.Raw) != string(final(1).Raw) || string(c.Raw) != string(final(2).Raw) {
			t.Fatalf("finals changed: %s %s", a.Raw, c.Raw)
		}
	})
}

func TestBackoff(t *testing.T) {
	wantCeil := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second,
		4 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second}
	for a, want := range wantCeil {
		if got := Ceiling(a); got != want {
			t.Errorf("Ceiling(%d) = %v, want %v", a, got, want)
		}
		for _, id := range []string{"c-1", "c-2", "client-199"} {
			d := Backoff(id, a)
			if d < 0 || d >= want {
				t.Errorf("Backoff(%s, %d) = %v, outside [0, %v)", id, a, d, want)
			}
			if d != Backoff(id, a) {
				t.Errorf("Backoff(%s, %d) not deterministic", id, a)
			}
		}
	}
	if Ceiling(1000) != BackoffCap {
		t.Error("no cap for a large attempt")
	}
	// A herd spreads out: 200 clients at attempt 0 cover the window.
	var buckets [10]int
	for i := range 200 {
		buckets[int(Jitter(fmt.Sprintf("client-%d", i), 0)*10)]++
	}
	for i, n := range buckets {
		if n < 8 || n > 35 {
			t.Errorf("bucket %d holds %d of 200 draws: jitter not spread (%v)", i, n, buckets)
		}
	}
}
