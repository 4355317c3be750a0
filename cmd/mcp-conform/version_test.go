package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionLine(t *testing.T) {
	plat := runtime.GOOS + "/" + runtime.GOARCH
	for _, tc := range []struct {
		bi      *debug.BuildInfo
		ok      bool
		release string
		want    string
	}{
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, true, "",
			"mcp-conform devel (commit unknown; go1.26.8 " + plat + ")"},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261127014528-6f44251a2e91+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "6f44251a2e91956444b9571c56ff3a72438e4dc1"}, {Key: "vcs.modified", Value: "true"}}}, true, "",
			"mcp-conform v0.0.0-20261127014528-6f44251a2e91+dirty (commit 6f44251a2e91956444b9571c56ff3a72438e4dc1, modified; go1.26.8 " + plat + ")"},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}}, true, "v1.2.3",
			"mcp-conform v1.2.3 (commit abc; go1.26.8 " + plat + ")"},
		{nil, false, "", "mcp-conform devel (commit unknown; " + runtime.Version() + " " + plat + ")"},
	} {
		version = tc.release
		if got := versionLine(tc.bi, tc.ok); got != tc.want {
			t.Errorf("versionLine = %q, want %q", got, tc.want)
		}
	}
	version = ""
}

// TestE2EVersionCommand: 'version' and '--version' print the build's version
// and commit: a release's from -ldflags, a clone's from its VCS stamp.
func TestE2EVersionCommand(t *testing.T) {
	skipShort(t, "builds mcp-conform")
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git: builds are not stamped with a commit")
	}
	head := func() string {
		out, err := exec.Command("git", "rev-parse", "HEAD").Output()
		if err != nil {
			t.Skipf("not a git checkout: %v", err)
		}
		return strings.TrimSpace(string(out))
	}
	before := head()
	exe := filepath.Join(t.TempDir(), "mcp-conform")
	build := exec.Command("go", "build", "-buildvcs=true", "-ldflags", "-X main.version=v1.2.3", "-o", exe, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	after := head()
	line := regexp.MustCompile(`^mcp-conform v1\.2\.3 \(commit ([0-9a-f]{40})(, modified)?; go1\.\d+(\.\d+)? \w+/\w+\)\n$`)
	for _, arg := range []string{"version", "--version"} {
		out, err := exec.Command(exe, arg).Output()
		if err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		m := line.FindStringSubmatch(string(out))
		if m == nil || (m[1] != before && m[1] != after) {
			t.Errorf("%s printed %q; want the version, commit %s and the Go version", arg, out, after)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"version", "x"}, &stdout, &stderr); code != exitUsage {
		t.Errorf("version x: exit %d, want 2", code)
	}
}
