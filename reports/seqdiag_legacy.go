package reports

import "strings"

// Transcripts recorded before the proxy wrote an outcome in each fault
// entry (the JSON reports of earlier versions, and entries converted without
// the field) say what became of a message only in their fault's name and
// sentence. These readers serve them; the sentences are those earlier
// versions wrote, which do not change. A fault added since always writes
// its outcome and needs no case here.

// outcomeOf is the outcome of a fault entry: the one recorded, or the one
// its name and sentence tell in an older transcript.
func outcomeOf(e Entry) string {
	if e.Outcome != "" {
		return e.Outcome
	}
	t := e.Text
	has := func(s string) bool { return strings.Contains(t, s) }
	switch e.Fault {
	case "drop":
		return "dropped"
	case "reset":
		if has("dropped instead") {
			return "dropped"
		}
		return "reset"
	case "crash":
		if has("lost") {
			return "dropped"
		}
	case "cut":
		switch {
		case has("dropped instead"):
			return "dropped"
		case has("before"):
			return "cut"
		}
	case "status":
		switch {
		case has("dropped instead"):
			return "dropped"
		case has("headers already sent"):
			return "cut"
		}
		return "answered"
	case "hold", "delay", "barrier":
		if has("not delivered") {
			return "dropped"
		}
		return "held"
	case "release":
		return "released"
	case "duplicate":
		return "duplicated"
	case "inject":
		if has("replaced") {
			return "replaced"
		}
	}
	return "delivered"
}

// onProcess reports whether a fault entry acted on the server process, so
// that the diagram draws it on the server's lane.
func onProcess(e Entry) bool {
	if e.OnProcess || e.Outcome != "" {
		return e.OnProcess
	}
	switch e.Fault {
	case "crash", "pause", "resume":
		return true
	}
	return false
}
