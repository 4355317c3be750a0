package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// chromium is the browser that takes the HTML report's screenshots.
const chromium = "/usr/bin/chromium"

var updateScreenshots = flag.Bool("update-screenshots", false, "write the HTML report's screenshots to docs/")

// TestE2EHTMLScreenshots: a real browser renders the HTML report of a run
// against a broken fixture: the summary of the REDIRECT and REPLAY
// checks, and the page of a run of REDIRECT-ORPHANED alone, which fails,
// with its timeline; and the same check passing on the embedded reference,
// where the call's notifications keep its colour on the new GET stream.
// With -update-screenshots the pictures go to docs/, where docs/reports.md shows
// them. Skipped without Chromium.
func TestE2EHTMLScreenshots(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		t.Skip("no " + chromium)
	}
	skipShort(t, "runs checks against a fixture")
	t.Parallel()
	dir := t.TempDir()
	out := dir
	if *updateScreenshots {
		out = "../../docs"
	}
	for _, s := range []struct{ name, fixture, focus, open string }{
		{"html-summary.png", "orphaned-notifications-dropped", "^(REDIRECT|REPLAY)-", ""},
		{"html-timeline.png", "orphaned-notifications-dropped", "^REDIRECT-ORPHANED:", ""},
		// The embedded reference; a passing check opens from the page's address.
		{"html-timeline-pass.png", "", "^REDIRECT-ORPHANED:", "#c-REDIRECT-ORPHANED"},
	} {
		page := filepath.Join(dir, s.name+".html")
		if s.fixture == "" {
			if out, errOut, code := runSelf(t, suiteTimeout, "server", "--protocol-version", wire.DefaultProtocolVersion, "--html", page, "--focus", s.focus); code != exitOK {
				t.Fatalf("exit %d against the reference\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
		} else {
			checkFixture(t, s.fixture, "../../fixtures/profile.yaml", exitFail,
				"--html", page, "--focus", s.focus, "--suggest-profile", "")
		}
		file, err := filepath.Abs(filepath.Join(out, s.name))
		if err != nil {
			t.Fatal(err)
		}
		screenshot(t, "file://"+page+s.open, file)
		checkPicture(t, file)
	}
}

// screenshot has headless Chromium render url into a PNG file. A browser
// that crashes (dies from a signal) is started once more: Debian's
// Chromium now and then segfaults at startup on a loaded machine, before it
// has read the page, which says nothing about the page.
func screenshot(t *testing.T, url, file string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		out, err := runChromium(t, url, file)
		if err == nil {
			return
		}
		var ee *exec.ExitError
		if attempt < 2 && errors.As(err, &ee) && !ee.Exited() {
			t.Logf("chromium crashed (%v), starting it again", err)
			continue
		}
		t.Fatalf("chromium: %v\n%s", err, out)
	}
}

// runChromium runs one headless screenshot of url into file.
func runChromium(t *testing.T, url, file string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--hide-scrollbars", "--user-data-dir="+t.TempDir(), "--window-size=1100,1000",
		"--screenshot="+file, url)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		// Killed for taking too long: not a crash to start again after.
		return out, fmt.Errorf("no screenshot within a minute: %v", err)
	}
	return out, err
}

// checkPicture checks that file is a PNG of the window's size that shows
// more than a blank page.
func checkPicture(t *testing.T, file string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	b := img.Bounds()
	colors := map[[3]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colors[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
		}
	}
	if b.Dx() != 1100 || b.Dy() != 1000 || len(colors) < 8 {
		t.Errorf("%s: %dx%d with %d colours; want 1100x1000 and a page drawn", file, b.Dx(), b.Dy(), len(colors))
	}
}
