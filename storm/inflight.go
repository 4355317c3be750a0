package storm

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// A client that reconnects with a new standalone GET only (new-get) never
// acknowledges the call's POST stream: a Last-Event-ID names a position in
// one stream, and the new GET's names the standalone one. What the server
// wrote to the POST stream before the reset reached it, and the client had
// not read, it can then only lose or send twice, without knowing which
// (README, Refresh storm). So new-get is graded as: nothing duplicated, and
// losses only among those notifications.
//
// Which they can be, per session: they follow step P, the last the client
// read on the POST stream before the cut; the call writes its steps at
// least an interval apart, the first no sooner than the call was sent, and
// none successfully after the cut ended (its next write fails there). Step
// P+m can thus have been in flight only if sent + (P+m-1)·interval <= cut
// end, i.e. m <= K = floor(window / interval), where the window, cut end
// minus (sent + (P-1)·interval), runs from the earliest step P can have
// been written to the end of the cut. A session's losses are in flight
// when every lost step is one of P+1 .. P+K. They need not be all of the
// first ones: a step delivered after the cut may be one written to the
// standalone stream before it, replayed to the new GET.

// InFlight is what a new-get storm lost in flight at the cut.
type InFlight struct {
	Lost     int `json:"lost"`     // notifications lost within the bound
	Sessions int `json:"sessions"` // sessions that lost any within it
	// Bound is K, Window the cut-detection window, over the sessions whose
	// last notification before the cut came on the POST stream.
	Bound  Counts    `json:"bound"`
	Window Latencies `json:"window_ms"`
	// Unbounded counts the sessions whose K reached every step after the
	// last one read: the bound could not tell a loss in flight from any
	// other there (the server began the call late, or the client read late).
	Unbounded int `json:"unbounded"`
}

// Counts summarises whole numbers.
type Counts struct {
	N   int `json:"n"`
	Min int `json:"min"`
	P50 int `json:"p50"`
	Max int `json:"max"`
}

// inFlight grades the losses of a new-get storm against the bound.
func (r *Result) inFlight(ss []*session, cutEnd time.Time, o Options) {
	if o.Reconnect != ReconnectNewGET {
		return
	}
	f := &InFlight{}
	examples := r.Examples // the sessions' own, after the ones below
	r.Examples = nil
	var ks []int
	var windows []time.Duration
	for _, s := range ss {
		s.mu.Lock()
		if s.id == "" { // never set up: counted as such, not as lost
			s.mu.Unlock()
			continue
		}
		p, k, window, ok := s.inFlightBound(cutEnd, o.Interval)
		if ok {
			ks = append(ks, k)
			windows = append(windows, window)
			if p+k >= s.want {
				f.Unbounded++
			}
		}
		missing := s.missingPositions()
		lost := s.want - s.distinct
		n := s.n
		s.mu.Unlock()
		if lost <= 0 {
			continue
		}
		if ok && lost == len(missing) && missing[0] > p && missing[lost-1] <= p+k {
			f.Lost += lost
			f.Sessions++
			continue
		}
		switch {
		case !ok && len(missing) == 0:
			r.example(fmt.Sprintf("session %d: %d lost: without progress steps the storm cannot tell whether they were in flight at the cut", n, lost))
		case !ok:
			r.example(fmt.Sprintf("session %d: steps %v lost, none in flight at the cut: no step came on the POST stream before it", n, missing))
		case k == 0:
			r.example(fmt.Sprintf("session %d: steps %v lost, none in flight at the cut: no step after step %d, the last read on the POST stream, can have been written before the cut ended (K = 0)", n, missing, p))
		default:
			r.example(fmt.Sprintf("session %d: steps %v lost, beyond those that can have been in flight at the cut: steps %d to %d (step %d the last read on the POST stream; K = %d)", n, missing, p+1, p+k, p, k))
		}
	}
	for _, e := range examples {
		r.example(e)
	}
	slices.Sort(ks)
	if len(ks) > 0 {
		f.Bound = Counts{N: len(ks), Min: ks[0], P50: ks[(len(ks)-1)/2], Max: ks[len(ks)-1]}
	}
	f.Window = latencies(windows)
	r.InFlight = f
}

// inFlightBound returns the last step p the session read on the POST
// stream before the cut and how many steps after it (k) can have been in
// flight, with the window k is derived from; ok is false when no step came
// on the POST stream before the cut. Call with s.mu.
func (s *session) inFlightBound(cutEnd time.Time, interval time.Duration) (p, k int, window time.Duration, ok bool) {
	for key, kinds := range s.notes {
		var v struct {
			Progress float64 `json:"progress"`
		}
		if kinds[0] == KindPOST && json.Unmarshal([]byte(key), &v) == nil {
			p = max(p, int(v.Progress))
		}
	}
	if p == 0 || s.sentAt.IsZero() {
		return 0, 0, 0, false
	}
	window = cutEnd.Sub(s.sentAt) - time.Duration(p-1)*interval
	return p, max(0, int(window/interval)), window, true
}
