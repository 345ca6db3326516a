package protocol

import (
	"slices"
	"time"
)

// Version is an MCP protocol version: the name of a specification
// revision, which is its release date written YYYY-MM-DD (the directories of
// specification/ and schema/). Compare versions with Before, Newer or
// Compare, not with the string operators: the order is the order of
// release.
type Version string

// The protocol versions mcp-conform speaks: the revisions whose pages and
// schemas the catalog cites.
const (
	V20250618 Version = "2025-06-18"
	V20251125 Version = "2025-11-25"
	V20260728 Version = "2026-07-28"
)

// FirstModern is the first version of the modern era.
const FirstModern = V20260728

// versions is the negotiation order: newest first.
var versions = []Version{V20260728, V20251125, V20250618}

// Versions returns the versions mcp-conform speaks in negotiation order,
// newest first (a fresh slice each call).
func Versions() []Version { return slices.Clone(versions) }

// Era is a protocol era: how version, identity and capabilities travel.
type Era string

// The two eras (2026-07-28 basic/versioning.mdx, "Terminology").
const (
	// EraLegacy versions establish a session with an initialize handshake
	// (2025-11-25 and earlier).
	EraLegacy Era = "legacy"
	// EraModern versions carry version and capabilities in every request's
	// _meta (2026-07-28 and later).
	EraModern Era = "modern"
)

// Versions returns the known versions of era e, newest first.
func (e Era) Versions() []Version {
	var out []Version
	for _, v := range versions {
		if v.Era() == e {
			out = append(out, v)
		}
	}
	return out
}

// String returns the version's text.
func (v Version) String() string { return string(v) }

// Known reports whether v is one of Versions.
func (v Version) Known() bool { return slices.Contains(versions, v) }

// Era returns v's era: modern for FirstModern and every later version
// (known or not), legacy for every earlier one and for text that is not a
// version date.
func (v Version) Era() Era {
	if v.Before(FirstModern) {
		return EraLegacy
	}
	return EraModern
}

// Before reports whether v was released before u.
func (v Version) Before(u Version) bool { return Compare(v, u) < 0 }

// Newer reports whether v was released after u.
func (v Version) Newer(u Version) bool { return Compare(v, u) > 0 }

// Compare orders versions by release date: -1 when a is older than b, +1
// when newer, 0 when they are the same version. Text that is not a
// YYYY-MM-DD date sorts before every version, and all such text compares
// equal, so Compare is a strict weak order fit for slices.SortFunc.
func Compare(a, b Version) int {
	if a == b {
		return 0
	}
	da, okA := a.date()
	db, okB := b.date()
	switch {
	case !okA && !okB:
		return 0
	case !okA:
		return -1
	case !okB:
		return 1
	}
	return da.Compare(db)
}

func (v Version) date() (time.Time, bool) {
	t, err := time.Parse(time.DateOnly, string(v))
	return t, err == nil
}
