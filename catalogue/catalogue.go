// Package catalogue is the behaviour catalogue as data: every behaviour ID the
// reference implements and the harness checks, with its level, section and the
// target-profile keys a check needs. IDs are the contract between the suites,
// the reports, the fixtures and the documentation.
package catalogue

import (
	"fmt"
	"sort"
	"strings"
)

// Level is how binding a behaviour is.
type Level string

// Levels: MUST/SHOULD/MAY come from the MCP specification; RES from the
// resilience design (required in the resilience profile).
const (
	Must   Level = "MUST"
	Should Level = "SHOULD"
	May    Level = "MAY"
	Res    Level = "RES"
)

// Profile is a group of checks selected with --profile.
type Profile string

// Profiles.
const (
	ProfileSpec       Profile = "spec"
	ProfileResilience Profile = "resilience"
	ProfileAll        Profile = "all"
)

// Side says which end of the connection a behaviour belongs to.
type Side string

// Sides.
const (
	Server Side = "server"
	Client Side = "client"
)

// NeedServerCmd marks a check that needs a restartable target.
const NeedServerCmd = "--server-cmd"

// Entry is one behaviour.
type Entry struct {
	ID      string   `json:"id"`
	Level   Level    `json:"level"`
	Side    Side     `json:"side"`
	Section string   `json:"section"`
	Summary string   `json:"summary"`
	SpecRef string   `json:"spec_ref"`
	Needs   []string `json:"needs,omitempty"` // target-profile keys or NeedServerCmd
}

// Profile returns the profile the entry belongs to.
func (e Entry) Profile() Profile {
	if e.Level == Res {
		return ProfileResilience
	}
	return ProfileSpec
}

// Labels are the Ginkgo labels of the entry's check: side, section, profile
// and level, all lower case, so --label-filter can select on any of them.
func (e Entry) Labels() []string {
	return []string{string(e.Side), e.Section, string(e.Profile()), strings.ToLower(string(e.Level))}
}

// Required reports whether a failed check of this entry fails the run.
func (e Entry) Required(strict bool) bool {
	switch e.Level {
	case Must, Res:
		return true
	case Should:
		return strict
	}
	return false
}

// All returns the catalogue in catalogue order.
func All() []Entry { return append([]Entry(nil), entries...) }

// Lookup finds an entry by ID.
func Lookup(id string) (Entry, bool) {
	e, ok := byID[id]
	return e, ok
}

// MustLookup is Lookup for IDs fixed in code; an unknown ID is a programming error.
func MustLookup(id string) Entry {
	e, ok := byID[id]
	if !ok {
		panic(fmt.Sprintf("catalogue: unknown behaviour ID %q", id))
	}
	return e
}

// IDs returns every ID of the given side, sorted.
func IDs(side Side) []string {
	var out []string
	for _, e := range entries {
		if e.Side == side {
			out = append(out, e.ID)
		}
	}
	sort.Strings(out)
	return out
}

var byID = func() map[string]Entry {
	m := make(map[string]Entry, len(entries))
	for _, e := range entries {
		if _, dup := m[e.ID]; dup {
			panic("catalogue: duplicate ID " + e.ID)
		}
		m[e.ID] = e
	}
	return m
}()
