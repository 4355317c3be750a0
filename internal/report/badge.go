package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Badge is a shields.io endpoint document
// (https://shields.io/badges/endpoint-badge).
type Badge struct {
	SchemaVersion int    `json:"schemaVersion"`
	Label         string `json:"label"`
	Message       string `json:"message"`
	Color         string `json:"color"`
}

// badgeLevels are the levels a badge counts, in the order it shows them.
var badgeLevels = []string{"RES", "MUST", "SHOULD", "MAY"}

// NewBadge counts, for each level, the checks that passed among those that
// ran ("31/33 RES, 16/16 MUST"); skipped checks are left out, a stale
// baseline entry counts as passed. The colour is brightgreen when every
// required check (MUST and RES; SHOULD too in a strict run) passed, red
// when one failed, expected to or not, or was blocked, and yellow when
// none failed but one was inconclusive.
func NewBadge(r *Run) Badge {
	passed, ran := map[string]int{}, map[string]int{}
	failed, unsure := false, false
	for _, c := range r.Checks {
		if c.Verdict == Skip {
			continue
		}
		ran[c.Level]++
		if c.Verdict == Pass || c.Verdict == Stale {
			passed[c.Level]++
			continue
		}
		if !required(c.Level, r.Strict) {
			continue
		}
		switch c.Verdict {
		case Inconclusive:
			unsure = true
		case Fail, ExpectedFailure, Blocked:
			failed = true
		}
	}
	var parts []string
	for _, l := range badgeLevels {
		if ran[l] > 0 {
			parts = append(parts, fmt.Sprintf("%d/%d %s", passed[l], ran[l], l))
		}
	}
	b := Badge{SchemaVersion: 1, Label: "MCP reconnection", Message: strings.Join(parts, ", "), Color: "brightgreen"}
	if r.Mode == "client" {
		b.Label = "MCP client reconnection"
	}
	switch {
	case len(parts) == 0:
		b.Message, b.Color = "no checks ran", "lightgrey"
	case failed:
		b.Color = "red"
	case unsure:
		b.Color = "yellow"
	}
	return b
}

// required reports whether a failed check of this level fails a run.
func required(level string, strict bool) bool {
	return level == "MUST" || level == "RES" || (strict && level == "SHOULD")
}

// WriteBadge writes the run's badge as shields.io endpoint JSON.
func WriteBadge(w io.Writer, r *Run) error {
	data, err := json.Marshal(NewBadge(r))
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
