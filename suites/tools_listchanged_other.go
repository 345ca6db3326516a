package suites

import (
	"fmt"

	"github.com/mcp-conform/mcp-conform/clients"
	"github.com/mcp-conform/mcp-conform/jsonrpc"
	"github.com/mcp-conform/mcp-conform/protocol"
)

// otherListener is TOOLS-LIST-CHANGED's second client: a connection
// opened before the listChanged role's call, listening as its version
// lets it (2026-07-28: its own subscriptions/listen stream for
// toolsListChanged; 2025: its channel, over HTTP its session's standalone
// GET stream), with the tool list it saw before the call. tools.mdx binds
// the notification to the change, not to the connection that caused it
// ("When the list of available tools changes, servers [...] SHOULD send a
// notification"; 2026-07-28: "to clients that have opened a
// subscriptions/listen stream with toolsListChanged: true").
type otherListener struct {
	conn   msgConn // nil over stdio
	before []string
	// deaf says why the connection has nothing to hear a notification on
	// ("" when it has).
	deaf string
}

// openOtherListener opens the second connection, has it listen, and lists
// its tools. Over Streamable HTTP it is a second session of the same
// server, through first's proxy; over WebSocket a new connection of the
// target (a spawned target: another server process); over stdio none (a
// stdio server has one client).
func openOtherListener(h *H, first msgConn) otherListener {
	if h.Target().Via() == protocol.TransportStdio {
		return otherListener{}
	}
	var c msgConn
	if hc, ok := first.(*httpMsg); ok {
		second := *hc.HConn
		second.W = h.SecondSession(hc.HConn)
		m := &httpMsg{HConn: &second}
		m.openStandalone()
		c = m
	} else {
		c = connectMsg(h)
	}
	o := otherListener{conn: c}
	switch hc, isHTTP := c.(*httpMsg); {
	case c.session().Era == clients.EraModern:
		ack := openListen(h, c, jsonrpc.StringID(unique("tools-listen-other")), map[string]any{"toolsListChanged": true})
		h.Notef("the second connection's subscriptions/listen acknowledged: %s", clip(ack.Raw))
	case isHTTP && hc.get == nil:
		o.deaf = "its 2025 session holds no standalone GET stream (the server offers none, or the session is stateless)"
	}
	o.before = listToolNames(h, c)
	return o
}

// judge lists the second connection's tools after the change: when they
// changed too, it is a client of the changed list, and a
// notifications/tools/list_changed must reach it after from (within the
// exchange timeout). It returns the complaint, or "" (noted why).
func (o otherListener) judge(h *H, from int) string {
	if o.conn == nil {
		h.Notef("over stdio the server has one client, the connection that made the change")
		return ""
	}
	after := listToolNames(h, o.conn)
	switch {
	case sameToolSet(o.before, after):
		h.Notef("a second connection's tools/list did not change (%d tools): another server, not judged there", len(after))
		return ""
	case o.deaf != "":
		h.Notef("a second connection saw the change (%s) but %s: not judged there", toolSetDiff(o.before, after), o.deaf)
		return ""
	}
	m, ok := o.conn.waitFirst(from, h.Cfg().OpTimeout, isToolsListChanged)
	if !ok {
		return fmt.Sprintf("the listChanged role's call on one connection changed tools/list for a second, listening connection too (%s there) "+
			"but no %s arrived on any stream of that connection %s", toolSetDiff(o.before, after), methodToolsListChanged, o.conn.silence(h.Cfg().OpTimeout))
	}
	h.Notef("the second connection saw the change (%s) and heard of it: %s", toolSetDiff(o.before, after), clip(m.Raw))
	return ""
}

// length is the second connection's transcript length (0 without one).
func (o otherListener) length() int {
	if o.conn == nil {
		return 0
	}
	return o.conn.length()
}
