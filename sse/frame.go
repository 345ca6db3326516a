package sse

// Frame is a block as NextFrame returns it: its bytes and its data, without
// the strings an Event holds.
type Frame struct {
	// Raw is the exact bytes of the block, as Event.Raw. Frames' Raw share
	// larger allocations (up to slabRaw bytes): keeping one keeps its slab.
	// Raw must not be changed (Data may be a part of it).
	Raw []byte
	// Data is the data field's value, as Event.Data: for a block of one
	// data line, a part of Raw (capacity capped: an append copies); else
	// its lines joined with "\n", in a new slice. Nil when HasData is
	// false.
	Data []byte
	// HasData and IsComment are as in Event.
	HasData   bool
	IsComment bool
}

// NextFrame is Next returning a Frame: for a reader that relays blocks and
// needs their bytes and data, not their fields as strings (a proxy). It
// allocates no string (but the id when it changes, for LastEventID), and
// carves the Raw copies from shared slabs instead of one allocation each.
// Its errors are Next's; Next and NextFrame may be mixed on one Reader.
func (r *Reader) NextFrame() (Frame, error) {
	r.frames = true
	_, err := r.Next()
	r.frames = false
	f := r.frame
	r.frame = Frame{}
	if err != nil {
		return Frame{}, err
	}
	return f, nil
}

// slabRaw is the largest slab NextFrame carves Raw copies from; the first
// ownFrames blocks and a block larger than slabRaw/8 get an allocation of
// their own.
const (
	slabRaw   = 32 << 10
	ownFrames = 4
)

// dispatchFrame is dispatch for NextFrame.
func (r *Reader) dispatchFrame() Frame {
	b := r.buf[r.blockStart:r.rp]
	var raw []byte
	if len(b) > slabRaw/8 || r.nframes < ownFrames {
		// A large block, or one of the first: an allocation of its own
		// (a short stream, an answer, costs no slab).
		raw = append([]byte(nil), b...)
	} else {
		if cap(r.slab)-len(r.slab) < len(b) {
			// Slabs grow from 2 KiB to slabRaw: a short stream keeps
			// little more than its bytes.
			r.slab = make([]byte, 0, min(max(2*cap(r.slab), 2<<10), slabRaw))
		}
		n := len(r.slab)
		r.slab = append(r.slab, b...)
		raw = r.slab[n:len(r.slab):len(r.slab)]
	}
	r.nframes++
	f := Frame{Raw: raw}
	if !r.hasFields {
		f.IsComment = true
	} else {
		switch len(r.data) {
		case 0:
		case 1:
			s := r.data[0]
			f.HasData, f.Data = true, raw[s.start:s.end:s.end]
		default:
			f.HasData, f.Data = true, []byte(join(raw, r.data))
		}
		if r.hasID {
			if id := raw[r.id.start:r.id.end]; string(id) != r.lastID {
				r.lastID = string(id)
			}
		}
	}
	r.blockStart = r.rp
	r.reset()
	return f
}
