package storm

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Result is what a storm measured. Durations are in milliseconds.
type Result struct {
	Options Summary   `json:"options"`
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"`

	SessionsSetUp     int       `json:"sessions_set_up"`
	SetupSeconds      float64   `json:"setup_seconds"`
	SessionsPerSecond float64   `json:"sessions_per_second"`
	Setup             Latencies `json:"setup_ms"`

	SessionsReachedCut int     `json:"sessions_reached_cut"`
	CutAfterSeconds    float64 `json:"cut_after_seconds"`
	ConnectionsCut     int     `json:"connections_cut"`
	SessionsComplete   int     `json:"sessions_complete"`
	SettleSeconds      float64 `json:"settle_seconds"`

	// Reconnect latencies from the cut, per stream kind: until the answer's
	// headers, and until its first event (a priming event counts).
	Headers    map[string]Latencies `json:"cut_to_headers_ms"`
	FirstEvent map[string]Latencies `json:"cut_to_first_event_ms"`

	Expected   int `json:"notifications_expected"`
	Delivered  int `json:"notifications_delivered"`
	Lost       int `json:"notifications_lost"`
	Duplicated int `json:"notifications_duplicated"`
	// ArrivedOn counts notifications by the stream kind they arrived on;
	// DuplicatedOn the second and later copies.
	ArrivedOn      map[string]int `json:"arrived_on"`
	DuplicatedOn   map[string]int `json:"duplicated_on"`
	ResultsMissing int            `json:"results_missing"`
	// CallErrors counts the calls answered with an error, by the error.
	CallErrors map[string]int `json:"call_errors,omitempty"`
	// LostAt counts lost notifications by their position in the call (1 = first).
	LostAt map[string]int `json:"lost_at,omitempty"`
	// InFlight, with new-get only, is how many of the lost were in flight
	// at the cut (see inflight.go), and the bound they were held to.
	InFlight   *InFlight      `json:"in_flight,omitempty"`
	HTTPErrors map[string]int `json:"http_errors"`
	Examples   []string       `json:"examples,omitempty"`

	ClientCPUSeconds float64 `json:"client_cpu_seconds"`
	Cores            int     `json:"cores"`
	// Server is set when the storm started the server itself.
	Server *ServerStats `json:"server,omitempty"`

	Failures []string `json:"failures"`
}

// Summary is the options of a run, as reported.
type Summary struct {
	URL            string         `json:"url"`
	Tool           string         `json:"tool"`
	Arguments      map[string]any `json:"arguments,omitempty"`
	Notifications  int            `json:"notifications"`
	Sessions       int            `json:"sessions"`
	Concurrency    int            `json:"concurrency"`
	CutAfter       int            `json:"cut_after"`
	Cut            string         `json:"cut"`
	Reconnect      string         `json:"reconnect"`
	ReconnectDelay string         `json:"reconnect_delay"`
	LogLevel       string         `json:"log_level,omitempty"`
}

func summarise(o Options) Summary {
	return Summary{
		URL: o.URL, Tool: o.Tool, Arguments: o.Arguments, Notifications: o.Notifications,
		Sessions: o.Sessions, Concurrency: o.Concurrency, CutAfter: o.CutAfter, Cut: o.Cut,
		Reconnect: o.Reconnect, ReconnectDelay: o.ReconnectDelay.String(), LogLevel: o.LogLevel,
	}
}

// Latencies summarises durations, in milliseconds.
type Latencies struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

func latencies(ds []time.Duration) Latencies {
	if len(ds) == 0 {
		return Latencies{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return ms(s[max(i, 0)])
	}
	return Latencies{N: len(s), P50: at(0.50), P99: at(0.99), Max: ms(s[len(s)-1])}
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }

// tally counts what every session received.
func (r *Result) tally(ss []*session, cutAt time.Time, o Options) {
	r.ArrivedOn, r.DuplicatedOn, r.LostAt, r.CallErrors = map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	heads, firsts := map[string][]time.Duration{}, map[string][]time.Duration{}
	for _, s := range ss {
		s.mu.Lock()
		if s.id == "" {
			s.mu.Unlock()
			continue
		}
		r.Expected += s.want
		for _, kinds := range s.notes {
			r.Delivered++
			r.ArrivedOn[kinds[0]]++
			for _, k := range kinds[1:] {
				r.Duplicated++
				r.DuplicatedOn[k]++
			}
		}
		if lost := s.want - s.distinct; lost > 0 {
			r.Lost += lost
			for _, p := range s.missingPositions() {
				r.LostAt[strconv.Itoa(p)]++
			}
			which := ""
			if pos := s.missingPositions(); len(pos) > 0 {
				which = fmt.Sprintf(" (steps %v)", pos)
			}
			r.example(fmt.Sprintf("session %d (%s): %d of %d notifications missing%s", s.n, s.id, lost, s.want, which))
		}
		if s.failed != "" {
			r.CallErrors[s.failed]++
			r.example(fmt.Sprintf("session %d (%s): the call failed: %s", s.n, s.id, s.failed))
		}
		if s.needRes && s.results == 0 {
			r.ResultsMissing++
			r.example(fmt.Sprintf("session %d (%s): no result", s.n, s.id))
		}
		if s.results > 1 {
			r.example(fmt.Sprintf("session %d (%s): %d results", s.n, s.id, s.results))
			r.Duplicated += s.results - 1
			r.DuplicatedOn["result"] += s.results - 1
		}
		for _, e := range s.errs {
			r.example(fmt.Sprintf("session %d (%s): %s", s.n, s.id, e))
		}
		for k, t := range s.headersAt {
			heads[k] = append(heads[k], t.Sub(cutAt))
		}
		for k, t := range s.firstAt {
			firsts[k] = append(firsts[k], t.Sub(cutAt))
		}
		s.mu.Unlock()
	}
	r.Headers, r.FirstEvent = map[string]Latencies{}, map[string]Latencies{}
	for k, ds := range heads {
		r.Headers[k] = latencies(ds)
	}
	for k, ds := range firsts {
		r.FirstEvent[k] = latencies(ds)
	}
}

// missingPositions are the steps (by their progress value) of the
// notifications a session did not receive, for progress notifications.
func (s *session) missingPositions() []int {
	seen := map[int]bool{}
	for key := range s.notes {
		var p struct {
			Progress float64 `json:"progress"`
		}
		if json.Unmarshal([]byte(key), &p) == nil && p.Progress > 0 {
			seen[int(p.Progress)] = true
		}
	}
	if len(seen) == 0 {
		return nil
	}
	var out []int
	for i := 1; i <= s.want; i++ {
		if !seen[i] {
			out = append(out, i)
		}
	}
	return out
}

func (r *Result) example(e string) {
	if len(r.Examples) < 20 {
		r.Examples = append(r.Examples, e)
	}
}

// Bounds are the latency bounds a run must meet; zero means none.
type Bounds struct {
	SetupP99, ResumeP99, NewGETP99 time.Duration
}

// Judge fills in Failures: every lost or duplicated notification, missing
// result, HTTP error and exceeded bound. A run passes when there are none.
func (r *Result) Judge(b Bounds) {
	r.Failures = nil
	fail := func(format string, args ...any) { r.Failures = append(r.Failures, fmt.Sprintf(format, args...)) }
	if n := r.Options.Sessions - r.SessionsSetUp; n > 0 {
		fail("%d sessions could not be set up", n)
	}
	switch lost := r.Lost - r.LostInFlight(); {
	case lost > 0 && r.InFlight != nil:
		fail("%d notifications lost beyond those in flight at the cut", lost)
	case lost > 0:
		fail("%d notifications lost", lost)
	}
	if r.Duplicated > 0 {
		fail("%d notifications or results duplicated", r.Duplicated)
	}
	if r.ResultsMissing > 0 {
		fail("%d results missing", r.ResultsMissing)
	}
	if n := sum(r.CallErrors); n > 0 {
		fail("%d calls answered with an error (%s)", n, counts(r.CallErrors))
	}
	if n := sum(r.HTTPErrors); n > 0 {
		fail("%d HTTP errors", n)
	}
	bound := func(name string, got float64, max time.Duration) {
		if max > 0 && got > ms(max) {
			fail("%s p99 %.1f ms exceeds the bound of %v", name, got, max)
		}
	}
	bound("setup", r.Setup.P99, b.SetupP99)
	bound("cut->resume headers", r.Headers[KindResume].P99, b.ResumeP99)
	bound("cut->new GET headers", r.Headers[KindNewGET].P99, b.NewGETP99)
}

// LostInFlight is how many of the lost notifications were in flight at
// the cut, within the bound (new-get only).
func (r *Result) LostInFlight() int {
	if r.InFlight == nil {
		return 0
	}
	return r.InFlight.Lost
}

// Passed reports a run without failures.
func (r *Result) Passed() bool { return len(r.Failures) == 0 }

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// WriteJSON writes the result as indented JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// cutBy says who reset the connections.
func cutBy(cut string) string {
	if cut == CutProxy {
		return "reset by the fault proxy on both sides"
	}
	return "reset by the client"
}

// WriteConsole writes a human summary.
func (r *Result) WriteConsole(w io.Writer) {
	o := r.Options
	fmt.Fprintf(w, "storm: %d sessions (%d at a time) on %s, %s %v; cut after %d of %d notifications; reconnect %s after %s\n",
		o.Sessions, o.Concurrency, o.URL, o.Tool, compactJSON(o.Arguments), o.CutAfter, o.Notifications, o.Reconnect, o.ReconnectDelay)
	if o.LogLevel != "" {
		fmt.Fprintf(w, "  log level    %s (logging/setLevel at setup)\n", o.LogLevel)
	}
	fmt.Fprintf(w, "  setup        %d sessions in %.2f s: %.0f sessions/s; p50 %.1f ms, p99 %.1f ms\n",
		r.SessionsSetUp, r.SetupSeconds, r.SessionsPerSecond, r.Setup.P50, r.Setup.P99)
	fmt.Fprintf(w, "  cut          %d connections at %.2f s, %s (%d of %d sessions had %d notifications)\n",
		r.ConnectionsCut, r.CutAfterSeconds, cutBy(o.Cut), r.SessionsReachedCut, r.SessionsSetUp, o.CutAfter)
	for _, k := range []string{KindResume, KindNewGET} {
		h, ok := r.Headers[k]
		if !ok {
			continue
		}
		f := r.FirstEvent[k]
		fmt.Fprintf(w, "  %-12s cut->headers p50 %.1f ms, p99 %.1f ms (%d); cut->first event p50 %.1f ms, p99 %.1f ms (%d)\n",
			k, h.P50, h.P99, h.N, f.P50, f.P99, f.N)
	}
	fmt.Fprintf(w, "  delivered    %d of %d notifications; lost %d, duplicated %d; results missing %d; %d of %d sessions complete after %.2f s\n",
		r.Delivered, r.Expected, r.Lost, r.Duplicated, r.ResultsMissing, r.SessionsComplete, r.SessionsSetUp, r.SettleSeconds)
	fmt.Fprintf(w, "  arrived on   %s\n", counts(r.ArrivedOn))
	if len(r.DuplicatedOn) > 0 {
		fmt.Fprintf(w, "  duplicates   %s\n", counts(r.DuplicatedOn))
	}
	if len(r.LostAt) > 0 {
		fmt.Fprintf(w, "  lost steps   %s\n", counts(r.LostAt))
	}
	if f := r.InFlight; f != nil {
		fmt.Fprintf(w, "  in flight    %d lost in %d sessions, each within the K steps after the last one read on the POST stream (the most the call can have written before the cut ended)\n", f.Lost, f.Sessions)
		fmt.Fprintf(w, "  bound        K = floor(window / interval), window = cut end - call sent - (last step read - 1) x interval: K min/p50/max %d/%d/%d, window p50 %.1f ms, max %.1f ms (%d sessions)\n",
			f.Bound.Min, f.Bound.P50, f.Bound.Max, f.Window.P50, f.Window.Max, f.Bound.N)
		if f.Unbounded > 0 {
			fmt.Fprintf(w, "  unbounded    in %d sessions K covered every step after the last one read: there no loss could be told from one in flight (the server began the call late or the client read late; a less loaded machine narrows the window)\n", f.Unbounded)
		}
	}
	if len(r.CallErrors) > 0 {
		fmt.Fprintf(w, "  call errors  %s\n", counts(r.CallErrors))
	}
	if len(r.HTTPErrors) > 0 {
		fmt.Fprintf(w, "  HTTP errors  %s\n", counts(r.HTTPErrors))
	}
	share := r.ClientCPUSeconds / r.Seconds / float64(max(r.Cores, 1)) * 100
	fmt.Fprintf(w, "  client CPU   %.2f s in %.2f s (%.0f%% of %d cores)", r.ClientCPUSeconds, r.Seconds, share, r.Cores)
	if share > 80 {
		fmt.Fprint(w, ": the load generator was saturated, latencies are its own")
	}
	fmt.Fprintln(w)
	if s := r.Server; s != nil {
		fmt.Fprintf(w, "  server       RSS %.1f MiB before, %.1f MiB idle with %d sessions (%.1f KiB each), peak %.1f MiB; CPU %.2f s setup, %.2f s storm\n",
			mib(s.RSSStart), mib(s.RSSIdle), r.SessionsSetUp, s.IdleKiBPerSession, mib(s.RSSPeak), s.SetupCPUSeconds, s.StormCPUSeconds)
	}
	for _, e := range r.Examples {
		fmt.Fprintf(w, "  - %s\n", e)
	}
	if r.Passed() {
		if n := r.LostInFlight(); n > 0 {
			fmt.Fprintf(w, "PASS (%d notifications lost in flight at the cut, within the bound: no new standalone GET can acknowledge them)\n", n)
			return
		}
		fmt.Fprintln(w, "PASS")
		return
	}
	fmt.Fprintf(w, "FAIL: %s\n", strings.Join(r.Failures, "; "))
}

func counts(m map[string]int) string {
	var parts []string
	keys := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(keys, func(a, b string) int { return len(a) - len(b) }) // 2 before 10
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func compactJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func numCPU() int { return runtime.NumCPU() }

// firstErrors returns up to three distinct errors of the sessions, joined.
func firstErrors(ss []*session) string {
	var out []string
	for _, s := range ss {
		if s == nil {
			continue
		}
		s.mu.Lock()
		for _, e := range s.errs {
			if len(out) < 3 && !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
		s.mu.Unlock()
	}
	return strings.Join(out, "; ")
}
