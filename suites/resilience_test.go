package suites

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/catalogue"
)

// resilienceDoc is the published resilience profile, from this package.
const resilienceDoc = "../docs/resilience.md"

// TestResilienceProfile: every reference into the resilience profile
// names a section of docs/resilience.md (by the anchor GitHub gives its
// heading), and that section states the checks that point to it.
func TestResilienceProfile(t *testing.T) {
	data, err := os.ReadFile(resilienceDoc)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{} // anchor -> the section's text
	var anchor string
	for _, line := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			anchor = slug(h)
			continue
		}
		if anchor != "" {
			sections[anchor] += line + "\n"
		}
	}
	for _, e := range All() {
		a, ok := strings.CutPrefix(e.SpecRef, catalogue.ResilienceProfile)
		if !ok {
			if e.Level == catalogue.Res && strings.Contains(e.SpecRef, "resilience") {
				t.Errorf("%s: spec reference %q does not point into %s", e.ID, e.SpecRef, resilienceDoc)
			}
			continue
		}
		text, ok := sections[a]
		switch {
		case !ok:
			t.Errorf("%s: %s has no section with anchor #%s", e.ID, resilienceDoc, a)
		case !regexp.MustCompile(`\b` + regexp.QuoteMeta(e.ID) + `\b`).MatchString(text):
			t.Errorf("%s: section #%s of %s does not name the check", e.ID, a, resilienceDoc)
		}
	}
}

// slug is the anchor GitHub gives a heading: lower case, spaces to
// hyphens, punctuation other than hyphens dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9'):
			b.WriteRune(r)
		}
	}
	return b.String()
}
