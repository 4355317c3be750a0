package tools

import (
	"context"
	"fmt"
	"regexp"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/utils/clock"
)

// The tally tools serve the sessionless revision (2026-07-28), where
// cross-call state is a handle passed as an argument: tally_steps advances
// a named count once per step, so what a call did before its stream was
// closed can be read afterwards with tally_get, and every step is a change
// of the resource tally://NAME that subscriptions/listen streams report.

// TallyNames lists the tools RegisterTally adds.
var TallyNames = []string{"tally_steps", "tally_get"}

// TallyURI is the resource a tally's changes are reported as.
func TallyURI(name string) string { return "tally://" + name }

// tallyName is what a tally may be called: safe in a URI and a log line.
var tallyName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidTallyName reports whether name can name a tally.
func ValidTallyName(name string) bool { return tallyName.MatchString(name) }

// maxTallies bounds the tallies one principal holds; the oldest goes first.
const maxTallies = 1024

// Tallies are one principal's named counts.
type Tallies struct {
	mu     sync.Mutex
	counts map[string]int64
	order  []string // names, oldest first
}

// Add counts one step of tally name and returns its new count.
func (t *Tallies) Add(name string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts == nil {
		t.counts = map[string]int64{}
	}
	if _, ok := t.counts[name]; !ok {
		if len(t.order) >= maxTallies {
			delete(t.counts, t.order[0])
			t.order = t.order[1:]
		}
		t.order = append(t.order, name)
	}
	t.counts[name]++
	return t.counts[name]
}

// Get returns tally name's count, 0 for a tally never advanced.
func (t *Tallies) Get(name string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.counts[name]
}

// TallyStepsArgs are tally_steps' arguments.
type TallyStepsArgs struct {
	Tally      string `json:"tally" jsonschema:"the tally to advance: 1 to 64 letters, digits, - or _"`
	Steps      int    `json:"steps" jsonschema:"number of steps, 1 to 10000"`
	IntervalMS int    `json:"interval_ms" jsonschema:"milliseconds before each step, 0 to 60000; steps × interval at most one hour"`
}

// TallyGetArgs are tally_get's arguments.
type TallyGetArgs struct {
	Tally string `json:"tally" jsonschema:"the tally to read"`
}

// TallyCount is tally_get's structured result.
type TallyCount struct {
	Count int64 `json:"count"`
}

// RegisterTally adds tally_steps and tally_get over t to srv; updated is
// told the name of each tally a step advanced.
func RegisterTally(srv *mcp.Server, t *Tallies, clk clock.Clock, updated func(name string)) {
	mcp.AddTool(srv, &mcp.Tool{Name: "tally_steps", Description: "Waits interval_ms before each of steps steps and adds one to the tally per step (the resource tally://TALLY changes); stops when its request is cancelled, which closing its stream is."},
		func(ctx context.Context, _ *mcp.CallToolRequest, args TallyStepsArgs) (*mcp.CallToolResult, any, error) {
			if !ValidTallyName(args.Tally) {
				return nil, nil, fmt.Errorf("tally must be 1 to 64 letters, digits, - or _, got %q", args.Tally)
			}
			interval, err := checkSteps(args.Steps, args.IntervalMS)
			if err != nil {
				return nil, nil, err
			}
			p := pacer{clock: clk, interval: interval}
			defer p.stop()
			for range args.Steps {
				if err := p.wait(ctx, nil); err != nil {
					return nil, nil, err
				}
				t.Add(args.Tally)
				if updated != nil {
					updated(args.Tally)
				}
			}
			return text(fmt.Sprintf("counted %d steps in tally %s", args.Steps, args.Tally)), nil, nil
		})

	mcp.AddTool(srv, &mcp.Tool{Name: "tally_get", Description: "Returns a tally's count: the steps tally_steps has counted in it."},
		func(ctx context.Context, _ *mcp.CallToolRequest, args TallyGetArgs) (*mcp.CallToolResult, TallyCount, error) {
			if !ValidTallyName(args.Tally) {
				return nil, TallyCount{}, fmt.Errorf("tally must be 1 to 64 letters, digits, - or _, got %q", args.Tally)
			}
			n := t.Get(args.Tally)
			return text(fmt.Sprint(n)), TallyCount{Count: n}, nil
		})
}
