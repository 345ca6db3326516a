package clients

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/jsonrpc"
)

const discoverOK = `{"resultType":"complete","supportedVersions":%s,"capabilities":{"tools":{}},"cacheScope":"public","ttlMs":0,"instructions":"hi","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}`

// expectDiscover receives a server/discover probe and checks its _meta.
func expectDiscover(p *peer, version string) (req, error) {
	r, err := p.expect("server/discover")
	if err != nil {
		return r, err
	}
	m := r.meta()
	caps, _ := m[MetaClientCapabilities].(map[string]any)
	info, _ := m[MetaClientInfo].(map[string]any)
	if m[MetaProtocolVersion] != version || caps == nil || len(caps) != 0 || info["name"] != "mcp-conform" || info["version"] != DefaultClientVersion {
		return r, fmt.Errorf("bad probe _meta: %s", r.Raw)
	}
	return r, nil
}

// expectInitialize answers an initialize request at want with answer and,
// when sendInitialized, expects notifications/initialized.
func expectInitialize(p *peer, want, answer string, expectInitialized bool) error {
	r, err := p.expect("initialize")
	if err != nil {
		return err
	}
	caps, _ := r.Params["capabilities"].(map[string]any)
	info, _ := r.Params["clientInfo"].(map[string]any)
	if r.Params["protocolVersion"] != want || caps == nil || info["name"] != "mcp-conform" || r.meta() != nil {
		return fmt.Errorf("bad initialize: %s", r.Raw)
	}
	if err := p.reply(r, fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{"logging":{}},"serverInfo":{"name":"legacy","version":"2"},"instructions":"old"}`, answer)); err != nil {
		return err
	}
	if !expectInitialized {
		return nil
	}
	n, err := p.expect("notifications/initialized")
	if err != nil {
		return err
	}
	if n.ID != nil || n.HasPar {
		return fmt.Errorf("bad initialized notification: %s", n.Raw)
	}
	return nil
}

// probed is the script of a peer that receives the modern probe, answers it
// and then takes the steps, in order.
func probed(answer func(p *peer, r req) error, steps ...func(p *peer) error) func(p *peer) error {
	return func(p *peer) error {
		r, err := expectDiscover(p, "2026-07-28")
		if err != nil {
			return err
		}
		if err := answer(p, r); err != nil {
			return err
		}
		for _, step := range steps {
			if err := step(p); err != nil {
				return err
			}
		}
		return nil
	}
}

// result answers with a result (JSON text).
func result(text string) func(p *peer, r req) error {
	return func(p *peer, r req) error { return p.reply(r, text) }
}

// answerError answers with a JSON-RPC error.
func answerError(code int, msg, data string) func(p *peer, r req) error {
	return func(p *peer, r req) error { return p.replyErr(r, code, msg, data) }
}

// initialize is the step of expectInitialize.
func initialize(want, answer string, expectInitialized bool) func(p *peer) error {
	return func(p *peer) error { return expectInitialize(p, want, answer, expectInitialized) }
}

// answerLate is a peer that initializes at 2025-11-25 without answering
// the probe first, and answers it (-32601) only afterwards: a late answer
// to the probe is only recorded.
func answerLate(p *peer) error {
	r, err := expectDiscover(p, "2026-07-28")
	if err != nil {
		return err
	}
	if err := expectInitialize(p, "2025-11-25", "2025-11-25", true); err != nil {
		return err
	}
	return p.replyErr(r, jsonrpc.CodeMethodNotFound, "late", "")
}

// expectEOF checks that nothing more arrives before the wire is closed.
func expectEOF(p *peer) error {
	r, err := p.recv()
	if err == nil {
		return fmt.Errorf("unexpected message %s", r.Raw)
	}
	if !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

func TestNegotiate(t *testing.T) {
	cases := []struct {
		name    string
		force   string
		opts    WireOptions
		script  func(p *peer) error
		wantV   string
		wantEra Era
		wantErr string // substring; "" = success
		// afterwards the peer expects a ping and checks its params.
		checkPing bool
	}{
		{
			name:   "discover result → modern",
			script: probed(result(fmt.Sprintf(discoverOK, `["2025-11-25","2026-07-28"]`))),
			wantV:  "2026-07-28", wantEra: EraModern, checkPing: true,
		},
		{
			name:   "forced modern, discover result",
			force:  "2026-07-28",
			script: probed(result(fmt.Sprintf(discoverOK, `["2026-07-28"]`))),
			wantV:  "2026-07-28", wantEra: EraModern, checkPing: true,
		},
		{
			name: "-32022 with known modern version → retry, modern",
			script: func(p *peer) error {
				r, err := expectDiscover(p, "2026-07-28")
				if err != nil {
					return err
				}
				if err := p.replyErr(r, jsonrpc.CodeUnsupportedProtocolVersion, "Unsupported protocol version", `{"supported":["2026-07-28","2025-11-25"],"requested":"2026-07-28"}`); err != nil {
					return err
				}
				r2, err := expectDiscover(p, "2026-07-28")
				if err != nil {
					return err
				}
				if string(r2.ID) == string(r.ID) {
					return errors.New("retry reused the probe id")
				}
				return p.reply(r2, fmt.Sprintf(discoverOK, `["2026-07-28"]`))
			},
			wantV: "2026-07-28", wantEra: EraModern, checkPing: true,
		},
		{
			name:    "-32022 with no known modern version → error, no initialize",
			script:  probed(answerError(jsonrpc.CodeUnsupportedProtocolVersion, "Unsupported protocol version", `{"supported":["2099-01-01","2025-11-25"],"requested":"2026-07-28"}`), expectEOF),
			wantErr: "2099-01-01",
		},
		{
			name:   "-32601 → legacy initialize",
			script: probed(answerError(jsonrpc.CodeMethodNotFound, "Method not found", ""), initialize("2025-11-25", "2025-11-25", true)),
			wantV:  "2025-11-25", wantEra: EraLegacy, checkPing: true,
		},
		{
			name:   "non-DiscoverResult result → legacy; server picks older known version",
			script: probed(result(`{}`), initialize("2025-11-25", "2025-06-18", true)),
			wantV:  "2025-06-18", wantEra: EraLegacy, checkPing: true,
		},
		{
			name:   "silence → legacy after probe timeout",
			opts:   WireOptions{ProbeTimeout: 100 * time.Millisecond},
			script: answerLate,
			wantV:  "2025-11-25", wantEra: EraLegacy, checkPing: true,
		},
		{
			name:   "discover lists only legacy versions → initialize at the common one",
			script: probed(result(fmt.Sprintf(discoverOK, `["2025-06-18"]`)), initialize("2025-06-18", "2025-06-18", true)),
			wantV:  "2025-06-18", wantEra: EraLegacy,
		},
		{
			name:    "discover lists nothing known → error",
			script:  probed(result(fmt.Sprintf(discoverOK, `["2099-01-01"]`)), expectEOF),
			wantErr: "none of which",
		},
		{
			name:    "legacy server chooses an unknown version → error naming it",
			script:  probed(answerError(jsonrpc.CodeInvalidParams, "Invalid params", ""), initialize("2025-11-25", "2024-11-05", false), expectEOF),
			wantErr: `"2024-11-05"`,
		},
		{
			name: "initialize rejected → error",
			script: func(p *peer) error {
				r, err := expectDiscover(p, "2026-07-28")
				if err != nil {
					return err
				}
				if err := p.replyErr(r, jsonrpc.CodeMethodNotFound, "Method not found", ""); err != nil {
					return err
				}
				r, err = p.expect("initialize")
				if err != nil {
					return err
				}
				return p.replyErr(r, jsonrpc.CodeInternalError, "boom", "")
			},
			wantErr: "boom",
		},
		{
			name:  "force legacy skips the probe",
			force: "2025-06-18",
			script: func(p *peer) error {
				return expectInitialize(p, "2025-06-18", "2025-06-18", true)
			},
			wantV: "2025-06-18", wantEra: EraLegacy, checkPing: true,
		},
		{
			name:  "force legacy, server answers another version → error",
			force: "2025-06-18",
			script: func(p *peer) error {
				if err := expectInitialize(p, "2025-06-18", "2025-11-25", false); err != nil {
					return err
				}
				return expectEOF(p)
			},
			wantErr: `server chose protocol version "2025-11-25"`,
		},
		{
			name:    "force modern against a legacy peer → error, no initialize",
			force:   "2026-07-28",
			script:  probed(answerError(jsonrpc.CodeMethodNotFound, "Method not found", ""), expectEOF),
			wantErr: "-32601",
		},
		{
			name:  "force modern against a silent peer → error, no initialize",
			force: "2026-07-28",
			opts:  WireOptions{ProbeTimeout: 50 * time.Millisecond},
			script: func(p *peer) error {
				if _, err := expectDiscover(p, "2026-07-28"); err != nil {
					return err
				}
				return expectEOF(p)
			},
			wantErr: "no initialize fallback",
		},
		{
			name:    "force modern, discover lacks it → error",
			force:   "2026-07-28",
			script:  probed(result(fmt.Sprintf(discoverOK, `["2025-11-25"]`)), expectEOF),
			wantErr: "not the forced",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, p := newPair(t, tc.opts)
			ctx := testCtx(t)
			wait := p.run(func(p *peer) error {
				if err := tc.script(p); err != nil {
					return err
				}
				if !tc.checkPing {
					return nil
				}
				r, err := p.expect("ping")
				if err != nil {
					return err
				}
				meta := r.meta()
				if tc.wantEra == EraModern && (meta[MetaProtocolVersion] != tc.wantV || meta[MetaClientCapabilities] == nil) {
					return fmt.Errorf("modern ping lacks _meta: %s", r.Raw)
				}
				if tc.wantEra == EraLegacy && r.HasPar {
					return fmt.Errorf("legacy ping has params: %s", r.Raw)
				}
				return p.reply(r, `{}`)
			})
			s, err := w.Negotiate(ctx, tc.force)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrNegotiation) {
					t.Fatalf("Negotiate = %+v, %v; want error containing %q", s, err, tc.wantErr)
				}
				if w.Session().Era != "" {
					t.Fatalf("session set after failure: %+v", w.Session())
				}
				_ = w.Close()
				wait()
				return
			}
			if err != nil {
				t.Fatalf("Negotiate: %v", err)
			}
			if s.Version != tc.wantV || s.Era != tc.wantEra || w.Session().Version != tc.wantV {
				t.Fatalf("session = %+v", s)
			}
			switch s.Era {
			case EraModern:
				if string(s.Capabilities) != `{"tools":{}}` || string(s.ServerInfo) != `{"name":"s","version":"1"}` || s.Instructions != "hi" || len(s.SupportedVersions) == 0 {
					t.Fatalf("modern session = %+v", s)
				}
			case EraLegacy:
				if string(s.Capabilities) != `{"logging":{}}` || string(s.ServerInfo) != `{"name":"legacy","version":"2"}` || s.Instructions != "old" {
					t.Fatalf("legacy session = %+v", s)
				}
			}
			if tc.checkPing {
				if _, err := w.Call(ctx, "ping", nil); err != nil {
					t.Fatal(err)
				}
			}
			wait()
		})
	}
}

func TestNegotiateSilenceTiming(t *testing.T) {
	w, p := newPair(t, WireOptions{ProbeTimeout: 100 * time.Millisecond})
	ctx := testCtx(t)
	wait := p.run(answerLate)
	start := time.Now()
	s, err := w.Negotiate(ctx, "")
	elapsed := time.Since(start)
	wait()
	if err != nil || s.Era != EraLegacy {
		t.Fatalf("Negotiate = %+v, %v", s, err)
	}
	if elapsed < 100*time.Millisecond || elapsed > 2*time.Second {
		t.Fatalf("fallback after %v, want about the 100ms probe timeout", elapsed)
	}
	// The late probe answer is recorded though nobody waits for it.
	if _, err := w.WaitFor(ctx, 0, func(m Message) bool { return m.Env.ID == jsonrpc.IntID(1) }); err != nil {
		t.Fatal(err)
	}
}

func TestNegotiateHonoursContext(t *testing.T) {
	w, p := newPair(t, WireOptions{ProbeTimeout: time.Minute})
	wait := p.run(func(p *peer) error { _, err := expectDiscover(p, "2026-07-28"); return err })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := w.Negotiate(ctx, "")
	wait()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Negotiate = %v, want deadline exceeded", err)
	}
}

func TestNegotiateRejectsUnknownForce(t *testing.T) {
	w, _ := newPair(t, WireOptions{})
	if _, err := w.Negotiate(testCtx(t), "2024-11-05"); !errors.Is(err, ErrNegotiation) {
		t.Fatalf("Negotiate = %v", err)
	}
}

func TestVersions(t *testing.T) {
	if !IsKnownVersion("2025-11-25") || IsKnownVersion("2024-11-05") {
		t.Fatal("IsKnownVersion")
	}
	if EraOf("2026-07-28") != EraModern || EraOf("2025-11-25") != EraLegacy || EraOf("2027-01-01") != EraModern {
		t.Fatal("EraOf")
	}
}
