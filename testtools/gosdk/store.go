package gosdk

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"
)

// Store is the keyed mutation's storage: the hook through which the
// mutation tool claims an operation key, commits its effect and result, and
// through which the probe and the lookup read them back. Implement it on the
// storage your server really uses (a table in your database), so that the
// IDEM checks test that storage's atomicity and durability, not this
// package's.
//
// Every method must be safe for concurrent use. For the IDEM checks that
// start a second server process on the same storage (IDEM-CONCURRENT over
// stdio) or kill the server and start it again (IDEM-RESTART), the store
// must be shared by every process opened on it and durable: what Commit
// wrote survives a SIGKILL right after it returned.
type Store interface {
	// Claim binds key to fingerprint (a digest of the call's arguments
	// without the key) for one execution. Of any number of concurrent
	// claims of a key that has no record, in this process or another,
	// exactly one wins: its Claim has Won set and a Token to commit with.
	// Every other claim gets the key's record as it stands (claimed or
	// committed, with its fingerprint). A claim that was never committed
	// and is older than the store's claim lease may be won again by a
	// claim with the same fingerprint (its owner died before committing,
	// so its effect never happened).
	Claim(ctx context.Context, key, fingerprint string) (Claim, error)
	// Commit records, in one atomic step, one execution of the claimed
	// operation's effect and its result: afterwards Lookup returns the
	// result and Executions counts one more, and before it neither. It
	// fails with ErrClaimLost, committing nothing, when the claim is no
	// longer the key's (its lease ran out and another claim won it).
	Commit(ctx context.Context, c Claim, result json.RawMessage) error
	// Lookup returns the key's record; ok is false when the key has none.
	Lookup(ctx context.Context, key string) (r Record, ok bool, err error)
	// Executions counts how many times the effect was committed for key,
	// or for every key when key is "". It counts every commit, so an
	// effect committed twice for one key shows as 2.
	Executions(ctx context.Context, key string) (int64, error)
}

// Claim is the outcome of Store.Claim.
type Claim struct {
	// Key and Fingerprint are what was claimed.
	Key, Fingerprint string
	// Won is true when this call owns the key now and must commit it.
	Won bool
	// Token identifies a won claim to Commit.
	Token string
	// Record is the key's record when the claim was not won.
	Record Record
}

// The states of a record.
const (
	StateClaimed   = "claimed"
	StateCommitted = "committed"
)

// Record is what a store holds for one operation key.
type Record struct {
	Key         string `json:"key"`
	Fingerprint string `json:"fingerprint"`
	// State is StateClaimed (an execution is under way, or its owner died
	// before committing) or StateCommitted.
	State string `json:"state"`
	// Token is the current claim's (Store implementations' business).
	Token string `json:"token,omitempty"`
	// ClaimedAt is when the current claim was won.
	ClaimedAt time.Time `json:"claimedAt"`
	// Result is the committed result, byte for byte as the first caller got
	// it; empty while claimed.
	Result json.RawMessage `json:"result,omitempty"`
	// Executions counts the commits of the key's effect.
	Executions int64 `json:"executions"`
}

// ErrClaimLost is Commit's error for a claim that is no longer the key's.
var ErrClaimLost = errors.New("the claim is no longer the key's (its lease ran out and another caller claimed the key)")

// DefaultClaimLease is how long a claim that was never committed holds its
// key before a claim with the same fingerprint may take it over.
const DefaultClaimLease = 30 * time.Second

// newToken is a random claim token.
func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Fingerprint is the digest the mutation tool binds a key to: the SHA-256 of
// the arguments without the key, as canonical JSON (object keys sorted, as
// encoding/json writes a map).
func Fingerprint(args map[string]any) string {
	b, _ := json.Marshal(args)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// claimRecord applies a claim to the key's current record (nil: none) at
// time now with lease: it returns the claim and the record to store (nil
// when nothing changes). It is the rule both stores here follow.
func claimRecord(cur *Record, key, fingerprint string, now time.Time, lease time.Duration) (Claim, *Record) {
	c := Claim{Key: key, Fingerprint: fingerprint}
	if cur != nil && (cur.State == StateCommitted || cur.Fingerprint != fingerprint || now.Sub(cur.ClaimedAt) < lease) {
		c.Record = *cur
		c.Record.Result = append(json.RawMessage(nil), cur.Result...)
		return c, nil
	}
	next := &Record{Key: key, Fingerprint: fingerprint, State: StateClaimed, Token: newToken(), ClaimedAt: now}
	if cur != nil { // a stale claim taken over: its effect never committed
		next.Executions = cur.Executions
	}
	c.Won, c.Token = true, next.Token
	return c, next
}

// commitRecord applies a commit to the key's current record: the record to
// store, or ErrClaimLost.
func commitRecord(cur *Record, c Claim, result json.RawMessage) (*Record, error) {
	if cur == nil || cur.State != StateClaimed || cur.Token != c.Token || c.Token == "" {
		return nil, ErrClaimLost
	}
	next := *cur
	next.State = StateCommitted
	next.Result = append(json.RawMessage(nil), result...)
	next.Executions++
	return &next, nil
}
