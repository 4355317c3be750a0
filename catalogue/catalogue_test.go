package catalogue

import (
	"regexp"
	"testing"
)

func TestEntries(t *testing.T) {
	id := regexp.MustCompile(`^[A-Z0-9]+(-[A-Z0-9]+)+$`)
	for _, e := range All() {
		if !id.MatchString(e.ID) || e.Summary == "" || e.Section == "" || e.SpecRef == "" {
			t.Errorf("incomplete entry %+v", e)
		}
		switch e.Level {
		case Must, Should, May, Res:
		default:
			t.Errorf("%s: level %q", e.ID, e.Level)
		}
		if (e.Side == Client) != (e.Section == "client") {
			t.Errorf("%s: side %s, section %s", e.ID, e.Side, e.Section)
		}
	}
	if len(Of(Server)) == 0 || len(Of(Client)) == 0 {
		t.Error("a side has no entries")
	}
	for _, e := range All() {
		if e.Exclusive && e.Side != Server {
			t.Errorf("%s: only server checks share a target, so only they can need to run alone", e.ID)
		}
		if e.Restarts && !e.Exclusive {
			t.Errorf("%s restarts the target but may run beside other checks", e.ID)
		}
	}
}

func TestRequired(t *testing.T) {
	for _, tc := range []struct {
		l           Level
		lax, strict bool
		wantProfile Profile
	}{
		{Must, true, true, ProfileSpec},
		{Should, false, true, ProfileSpec},
		{May, false, false, ProfileSpec},
		{Res, true, true, ProfileResilience},
	} {
		e := Entry{Level: tc.l}
		if e.Required(false) != tc.lax || e.Required(true) != tc.strict || e.Profile() != tc.wantProfile {
			t.Errorf("%s: required %v/%v profile %s", tc.l, e.Required(false), e.Required(true), e.Profile())
		}
	}
	if _, ok := Lookup("NOPE"); ok {
		t.Error("Lookup of an unknown ID succeeded")
	}
}
