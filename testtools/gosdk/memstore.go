package gosdk

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// MemoryStore is a Store in this process's memory. It is NOT DURABLE: a
// restart forgets every key, and a second process has a store of its own.
// IDEM-RESTART and IDEM-CONCURRENT over stdio fail on it, rightly; use it
// only to try the tools out, and FileStore or your own Store for the checks.
type MemoryStore struct {
	// Lease is the claim lease (DefaultClaimLease when zero).
	Lease time.Duration

	mu      sync.Mutex
	records map[string]*Record
	total   int64
}

// NewMemoryStore returns an empty MemoryStore (not durable).
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

func (s *MemoryStore) lease() time.Duration {
	if s.Lease > 0 {
		return s.Lease
	}
	return DefaultClaimLease
}

// Claim implements Store.
func (s *MemoryStore) Claim(_ context.Context, key, fingerprint string) (Claim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, next := claimRecord(s.records[key], key, fingerprint, time.Now(), s.lease())
	if next != nil {
		if s.records == nil {
			s.records = map[string]*Record{}
		}
		s.records[key] = next
	}
	return c, nil
}

// Commit implements Store.
func (s *MemoryStore) Commit(_ context.Context, c Claim, result json.RawMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next, err := commitRecord(s.records[c.Key], c, result)
	if err != nil {
		return err
	}
	s.records[c.Key] = next
	s.total++
	return nil
}

// Lookup implements Store.
func (s *MemoryStore) Lookup(_ context.Context, key string) (Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.records[key]
	if !ok {
		return Record{}, false, nil
	}
	out := *r
	out.Result = append(json.RawMessage(nil), r.Result...)
	return out, true, nil
}

// Executions implements Store.
func (s *MemoryStore) Executions(_ context.Context, key string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if key == "" {
		return s.total, nil
	}
	if r, ok := s.records[key]; ok {
		return r.Executions, nil
	}
	return 0, nil
}
