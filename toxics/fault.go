package toxics

import (
	"sync"

	"github.com/Shopify/toxiproxy/v2/stream"
	tptoxics "github.com/Shopify/toxiproxy/v2/toxics"
)

// faultType is the Toxiproxy toxic type of the switch every proxy carries in
// both directions, through which Refresh, Freeze, Stall, CutAfter and Reset act,
// and of the tail that follows every built-in toxic.
const faultType = "mcp_conform_fault"

// Roles of a faultToxic, set in its JSON attributes.
const (
	roleUpstream   = "upstream"   // switch on the client-to-server link
	roleDownstream = "downstream" // switch on the server-to-client link
	// roleTail only forwards, and drops everything once the proxy closes.
	// One follows each built-in toxic so that the last toxic of a chain is
	// always one of ours, which answers interrupts even while it waits to
	// write. Toxiproxy's own toxics do not: with one of them last, adding a
	// toxic while a client is not reading hangs, and closing the proxy with
	// data in flight leaves it blocked forever.
	roleTail = "tail"
)

func init() {
	tptoxics.Register(faultType, new(faultToxic))
}

// controls maps proxy names to their fault state. Toxiproxy builds toxics
// from JSON, so a toxic finds its proxy's state by name.
var controls = struct {
	sync.Mutex
	m map[string]*control
}{m: make(map[string]*control)}

func registerControl(name string, c *control) {
	controls.Lock()
	defer controls.Unlock()
	controls.m[name] = c
}

func unregisterControl(name string) {
	controls.Lock()
	defer controls.Unlock()
	delete(controls.m, name)
}

func lookupControl(name string) *control {
	controls.Lock()
	defer controls.Unlock()
	return controls.m[name]
}

// control is the per-proxy fault state the switch toxics consult. Faults are
// ordered by generation: a connection takes the generation current when it
// opens, and a fault raised at generation g affects only connections older
// than g, so connections opened afterwards pass through.
type control struct {
	mu        sync.Mutex
	gen       uint64    // generation given to connections opening now
	pairGen   uint64    // generation of the connection being opened
	killGen   uint64    // connections older than this are closed
	freezeGen uint64    // connections older than this stop forwarding
	stallGen  uint64    // connections older than this stop reading the server
	stalled   int64     // bytes stalled links took before they stopped reading
	cut       *cutOrder // pending CutAfter, nil when none or already done
	released  bool      // the proxy is closing: drop everything
	changed   chan struct{}
}

// cutOrder is one CutAfter call; its identity tells connections that a new
// count starts.
type cutOrder struct {
	n     int
	onCut func() // called once the stream is closed; may be nil
}

// view is a consistent copy of the control state.
type view struct {
	killGen, freezeGen uint64
	stallGen           uint64
	cut                *cutOrder
	released           bool
}

func newControl() *control {
	return &control{changed: make(chan struct{})}
}

// snapshot returns the current state and a channel closed at the next change.
func (c *control) snapshot() (view, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return view{c.killGen, c.freezeGen, c.stallGen, c.cut, c.released}, c.changed
}

// update applies f under the lock and wakes every switch.
func (c *control) update(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
	close(c.changed)
	c.changed = make(chan struct{})
}

// kill closes every connection open now.
func (c *control) kill() {
	c.update(func() { c.gen++; c.killGen = c.gen })
}

// freeze stops every connection open now.
func (c *control) freeze() {
	c.update(func() { c.gen++; c.freezeGen = c.gen })
}

// stall makes every connection open now stop reading the server.
func (c *control) stall() {
	c.update(func() { c.gen++; c.stallGen = c.gen })
}

// stallBudget is how many bytes a stalled link still takes (and drops)
// before it stops reading: enough to tell that the server is writing to
// it, far too few to relieve a server that writes much.
const stallBudget = 4096

// takeStalled counts n bytes a stalled link took.
func (c *control) takeStalled(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stalled += int64(n)
}

// stalledBytes is the number of bytes stalled links took.
func (c *control) stalledBytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stalled
}

// armCut starts a new CutAfter count, replacing any pending one.
func (c *control) armCut(n int, onCut func()) {
	c.update(func() { c.cut = &cutOrder{n: n, onCut: onCut} })
}

// claim takes the cut for one connection; only the first caller wins.
func (c *control) claim(o *cutOrder) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut != o {
		return false
	}
	c.cut = nil
	return true
}

// release makes every switch drop its data and close.
func (c *control) release() {
	c.update(func() { c.released = true })
}

// connGen returns the generation of a link being opened. Toxiproxy opens a
// connection's client-to-server link and then its server-to-client link from
// one goroutine, so the second takes the generation of the first and the
// two directions of a connection always agree, even across a fault raised
// between them.
func (c *control) connGen(dir stream.Direction) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if dir == stream.Upstream {
		c.pairGen = c.gen
	}
	return c.pairGen
}

// faultToxic is the switch or a tail (see the roles). Without a known
// proxy it passes data through.
type faultToxic struct {
	Proxy string `json:"proxy"`
	Role  string `json:"role"`
}

// linkState is the per-link state kept on the stub, so that it survives the
// interrupts Toxiproxy sends when another toxic is added.
type linkState struct {
	ctl     *control
	gen     uint64
	closed  bool                // Output is closed; only draining remains
	pending *stream.StreamChunk // scanned, not yet forwarded
	cutNow  bool                // close Output once pending is forwarded
	scan    eventScanner        // server-to-client switch only
	order   *cutOrder           // the CutAfter being counted
	count   int                 // events seen since order was armed
	taken   int                 // bytes taken while stalled
}

// NewState records the link's proxy and generation when the link opens.
func (t *faultToxic) NewState() interface{} {
	st := &linkState{ctl: lookupControl(t.Proxy)}
	if st.ctl == nil {
		return st
	}
	switch t.Role {
	case roleUpstream:
		st.gen = st.ctl.connGen(stream.Upstream)
	case roleDownstream:
		st.gen = st.ctl.connGen(stream.Downstream)
	}
	return st
}

// Pipe forwards chunks until the link ends, applying the faults raised
// since the link opened. It returns on Interrupt (Toxiproxy runs it again
// with the same state) and always drains Input once Output is closed, so the
// goroutines feeding it never block.
func (t *faultToxic) Pipe(stub *tptoxics.ToxicStub) {
	st, ok := stub.State.(*linkState)
	if !ok {
		st = &linkState{} // not opened by Toxiproxy: pass data through
		stub.State = st
	}
	for {
		if st.closed {
			for range stub.Input {
			}
			return
		}
		var v view
		var changed <-chan struct{}
		if st.ctl != nil {
			v, changed = st.ctl.snapshot()
		}
		isSwitch := t.Role != roleTail
		stalled := t.Role == roleDownstream && st.gen < v.stallGen
		switch {
		case v.released || isSwitch && st.gen < v.killGen:
			st.pending = nil
			st.closed = true
			stub.Close()
			continue
		case isSwitch && st.gen < v.freezeGen, stalled && st.taken >= stallBudget:
			select {
			case <-stub.Interrupt:
				return
			case <-changed:
			}
			continue
		case stalled:
			// Take (and drop) up to stallBudget bytes, then stop reading,
			// so the server's buffers fill.
			st.pending = nil
		}
		if st.pending != nil {
			select {
			case stub.Output <- st.pending:
				st.pending = nil
				if st.cutNow {
					st.closed = true
					stub.Close()
					if f := st.order.onCut; f != nil {
						f()
					}
				}
			case <-stub.Interrupt:
				return
			case <-changed:
			}
			continue
		}
		select {
		case c := <-stub.Input:
			if c == nil {
				st.closed = true
				stub.Close()
				return
			}
			if stalled {
				st.taken += len(c.Data)
				st.ctl.takeStalled(len(c.Data))
				continue
			}
			st.pending = c
			if t.Role == roleDownstream && st.ctl != nil {
				scanChunk(st, c, v.cut)
			}
		case <-stub.Interrupt:
			return
		case <-changed:
		}
	}
}

// scanChunk counts the events in a server-to-client chunk. When the pending
// CutAfter is reached inside it, and this link wins the cut, the chunk is
// shortened to end right after the last counted event and the link is
// marked to close once it is forwarded.
func scanChunk(st *linkState, c *stream.StreamChunk, order *cutOrder) {
	if order != st.order {
		st.order, st.count = order, 0
	}
	limit := 0
	if order != nil {
		limit = order.n - st.count
	}
	n, events := st.scan.feed(c.Data, limit)
	st.count += events
	if limit <= 0 || events < limit {
		return
	}
	if !st.ctl.claim(order) {
		st.scan.feed(c.Data[n:], 0)
		return
	}
	st.pending = &stream.StreamChunk{Data: c.Data[:n], Timestamp: c.Timestamp}
	st.cutNow = true
}
