#!/usr/bin/env python3
"""A deliberately hostile stdio MCP server for mcp-conform's CLI tests.

It answers the handshake properly (an error to the server/discover probe, so
the client falls back to the legacy initialize handshake at 2025-11-25) and
answers ping, then misbehaves on tools/call according to its one argument:

  crash    writes a line on stderr and exits with status 7
  hang     never answers and never sends progress (still answers ping)
  garble   answers with a line that is not JSON instead of the response
  garbage  answers everything correctly, but writes a non-JSON line on
           stdout before every response after the handshake
  ok       answers at once with a result and no progress

It reads stdin to its end and exits 0 there, as a stdio server should.
HOSTILE_HANG_MARK, when set in mode hang, is a file it makes at the first
tools/call it leaves unanswered.
HOSTILE_PROTOCOL, when set, is the one protocol version it answers
initialize with (default 2025-11-25), whatever the client asked for.
"""
import json
import os
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"
PROTOCOL = os.environ.get("HOSTILE_PROTOCOL", "2025-11-25")


def send(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def raw(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def reply(mid, result):
    if MODE == "garbage":
        raw("hostile: this line is not JSON-RPC")
    send({"jsonrpc": "2.0", "id": mid, "result": result})


def main():
    while True:
        line = sys.stdin.readline()
        if not line:
            return 0
        try:
            msg = json.loads(line)
        except ValueError:
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
            continue  # notifications (cancellations included) and responses
        mid, method = msg["id"], msg["method"]
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": PROTOCOL,
                # It claims tasks, so that the TASK checks call it too.
                "capabilities": {"tools": {}, "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}},
                "serverInfo": {"name": "hostile-" + MODE, "version": "1"},
            }})
        elif method == "ping":
            reply(mid, {})
        elif method == "tools/call":
            if MODE == "crash":
                sys.stderr.write("hostile: crashing on tools/call\n")
                sys.stderr.flush()
                os._exit(7)
            elif MODE == "hang":
                # HOSTILE_HANG_MARK names a file made when a call first
                # hangs: a test's sign that a check now waits on it.
                mark = os.environ.get("HOSTILE_HANG_MARK")
                if mark and not os.path.exists(mark):
                    open(mark, "w").close()
                continue
            elif MODE == "garble":
                raw('{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"te' % json.dumps(mid))
                raw("hostile: garbled response above")
            else:
                reply(mid, {"content": [{"type": "text", "text": "done"}]})
        else:  # server/discover included: a legacy server
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found: " + method}})


if __name__ == "__main__":
    sys.exit(main())
