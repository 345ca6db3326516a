package gosdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// fileFormat names the layout of a FileStore's file.
const fileFormat = "mcp-conform-testtools-store/1"

// FileStore is a durable Store in one JSON file, shared by every process
// opened on the same path: each change takes an exclusive lock on
// PATH.lock (flock on unix, LockFileEx on Windows: the kernel releases it
// when its holder dies), reads the whole file, and replaces it atomically
// (a temporary file, fsync, rename, fsync of the directory). A claim and a
// commit are each one such replacement, so a process killed after Commit
// returned has committed the effect and its result together, and one killed
// before has committed neither. Reads take no lock (a rename is atomic).
//
// It is meant for tests: every change rewrites the whole file.
type FileStore struct {
	// Lease is the claim lease (DefaultClaimLease when zero).
	Lease time.Duration

	path string
	mu   sync.Mutex // orders this process's changes before the file lock
}

// fileData is a FileStore's file.
type fileData struct {
	Format  string             `json:"format"`
	Total   int64              `json:"totalExecutions"`
	Records map[string]*Record `json:"records"`
}

// OpenFileStore opens the store in the file at path, creating its directory;
// the file itself is created by the first claim.
func OpenFileStore(path string) (*FileStore, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("file store %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("file store %s: %w", path, err)
	}
	s := &FileStore{path: abs}
	if _, err := s.read(); err != nil {
		return nil, err
	}
	return s, nil
}

// Path is the store's file.
func (s *FileStore) Path() string { return s.path }

func (s *FileStore) lease() time.Duration {
	if s.Lease > 0 {
		return s.Lease
	}
	return DefaultClaimLease
}

// read reads the file; a missing file is an empty store.
func (s *FileStore) read() (*fileData, error) {
	b, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return &fileData{Format: fileFormat, Records: map[string]*Record{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("file store: %w", err)
	}
	var d fileData
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("file store %s: %w", s.path, err)
	}
	if d.Format != fileFormat {
		return nil, fmt.Errorf("file store %s: format %q, want %q", s.path, d.Format, fileFormat)
	}
	if d.Records == nil {
		d.Records = map[string]*Record{}
	}
	return &d, nil
}

// update runs change on the file's contents under the cross-process lock and
// writes the result when change reports a change.
func (s *FileStore) update(ctx context.Context, change func(*fileData) (bool, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	unlock, err := lockPath(ctx, s.path+".lock")
	if err != nil {
		return fmt.Errorf("file store %s: lock: %w", s.path, err)
	}
	defer unlock()
	d, err := s.read()
	if err != nil {
		return err
	}
	changed, err := change(d)
	if err != nil || !changed {
		return err
	}
	return s.write(d)
}

// write replaces the file atomically and durably.
func (s *FileStore) write(d *fileData) error {
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("file store: %w", err)
	}
	dir := filepath.Dir(s.path)
	tmp, err := os.CreateTemp(dir, filepath.Base(s.path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("file store: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing there
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("file store: write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("file store: fsync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("file store: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("file store: %w", err)
	}
	return syncDir(dir)
}

// Claim implements Store.
func (s *FileStore) Claim(ctx context.Context, key, fingerprint string) (Claim, error) {
	var c Claim
	err := s.update(ctx, func(d *fileData) (bool, error) {
		var next *Record
		c, next = claimRecord(d.Records[key], key, fingerprint, time.Now(), s.lease())
		if next == nil {
			return false, nil
		}
		d.Records[key] = next
		return true, nil
	})
	return c, err
}

// Commit implements Store.
func (s *FileStore) Commit(ctx context.Context, c Claim, result json.RawMessage) error {
	return s.update(ctx, func(d *fileData) (bool, error) {
		next, err := commitRecord(d.Records[c.Key], c, result)
		if err != nil {
			return false, err
		}
		d.Records[c.Key] = next
		d.Total++
		return true, nil
	})
}

// Lookup implements Store.
func (s *FileStore) Lookup(_ context.Context, key string) (Record, bool, error) {
	d, err := s.read()
	if err != nil {
		return Record{}, false, err
	}
	r, ok := d.Records[key]
	if !ok {
		return Record{}, false, nil
	}
	return *r, true, nil
}

// Executions implements Store.
func (s *FileStore) Executions(_ context.Context, key string) (int64, error) {
	d, err := s.read()
	if err != nil {
		return 0, err
	}
	if key == "" {
		return d.Total, nil
	}
	if r, ok := d.Records[key]; ok {
		return r.Executions, nil
	}
	return 0, nil
}

// lockPoll is how often a FileStore retries a lock another process holds.
const lockPoll = 2 * time.Millisecond

// lockPath takes the exclusive lock of the file at path (created if
// missing), waiting until ctx is done, and returns its release.
func lockPath(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		if ok {
			return func() { _ = unlock(f); f.Close() }, nil
		}
		t := time.NewTimer(lockPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
