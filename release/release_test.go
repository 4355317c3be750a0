package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// goreleaser is the GoReleaser the snapshot build runs: v2.15.1 is the
// newest release whose go.mod asks for no Go newer than this module's
// (1.26; v2.18 asks for 1.27) and whose dependencies all come from the
// usual module hosts (v2.16 and later also need go.digitalxero.dev/go-msix).
const goreleaser = "github.com/goreleaser/goreleaser/v2@v2.15.1"

// snapshotEnv turns on TestReleaseSnapshot (make release-snapshot): it
// builds every release binary, minutes on two cores.
const snapshotEnv = "MCP_CONFORM_RELEASE_TEST"

var (
	binaries = []string{"mcp-conform", "reference-server"}
	targets  = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}
)

type build struct {
	ID      string   `json:"id"`
	Main    string   `json:"main"`
	Binary  string   `json:"binary"`
	Goos    []string `json:"goos"`
	Goarch  []string `json:"goarch"`
	Ldflags []string `json:"ldflags"`
}

type config struct {
	Builds   []build `json:"builds"`
	Checksum struct {
		NameTemplate string `json:"name_template"`
		Algorithm    string `json:"algorithm"`
	} `json:"checksum"`
}

// TestConfig: the configuration builds both binaries for every target,
// stamps mcp-conform with its version and commit, and writes checksums.
func TestConfig(t *testing.T) {
	data, err := os.ReadFile("../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c config
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	for _, bin := range binaries {
		i := slices.IndexFunc(c.Builds, func(b build) bool { return b.Binary == bin })
		if i < 0 {
			t.Errorf("no build of %s", bin)
			continue
		}
		b := c.Builds[i]
		if b.Main != "./cmd/"+bin {
			t.Errorf("%s is built from %s", bin, b.Main)
		}
		var got []string
		for _, os := range b.Goos {
			for _, arch := range b.Goarch {
				got = append(got, os+"/"+arch)
			}
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(targets))
		if !slices.Equal(got, want) {
			t.Errorf("%s targets %v, want %v", bin, got, want)
		}
		if bin == "mcp-conform" && !strings.Contains(strings.Join(b.Ldflags, " "), "-X main.version=v{{ .Version }} -X main.commit={{ .FullCommit }}") {
			t.Errorf("mcp-conform's ldflags %v do not set main.version and main.commit", b.Ldflags)
		}
	}
	if c.Checksum.NameTemplate == "" || c.Checksum.Algorithm != "sha256" {
		t.Errorf("checksum %+v, want sha256 checksums", c.Checksum)
	}
}

// artifact is an entry of dist/artifacts.json.
type artifact struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Goos   string `json:"goos"`
	Goarch string `json:"goarch"`
	Type   string `json:"type"`
}

// TestReleaseSnapshot runs GoReleaser's snapshot build (nothing is
// published) in a clean clone of HEAD with this checkout's configuration:
// every binary for every target, archives whose checksums checksums.txt
// holds, and an mcp-conform that prints its snapshot version and commit.
func TestReleaseSnapshot(t *testing.T) {
	if os.Getenv(snapshotEnv) == "" {
		t.Skipf("set %s=1 (make release-snapshot): builds every release binary, minutes on two cores", snapshotEnv)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "mcp-conform")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("git", "clone", "-q", "--no-local", root, dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	// GoReleaser names the release's repository from the remote.
	git("remote", "set-url", "origin", "https://github.com/example/mcp-conform.git")
	head := git("rev-parse", "HEAD")
	config, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".goreleaser.yaml"), config, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "run", goreleaser, "release", "--snapshot", "--clean", "--skip=publish")
	cmd.Dir = dir
	began := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("goreleaser: %v\n%s", err, out)
	}
	t.Logf("goreleaser release --snapshot: %v", time.Since(began).Round(time.Second))

	data, err := os.ReadFile(filepath.Join(dir, "dist", "artifacts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var arts []artifact
	if err := json.Unmarshal(data, &arts); err != nil {
		t.Fatal(err)
	}
	built := map[string]string{}
	var archives []artifact
	var sums string
	for _, a := range arts {
		switch a.Type {
		case "Binary":
			built[a.Name+" "+a.Goos+"/"+a.Goarch] = filepath.Join(dir, a.Path)
		case "Archive":
			archives = append(archives, a)
		case "Checksum":
			b, err := os.ReadFile(filepath.Join(dir, a.Path))
			if err != nil {
				t.Fatal(err)
			}
			sums = string(b)
		}
	}
	for _, bin := range binaries {
		for _, target := range targets {
			name := bin
			if strings.HasPrefix(target, "windows/") {
				name += ".exe"
			}
			if _, ok := built[name+" "+target]; !ok {
				t.Errorf("no %s for %s", name, target)
			}
		}
	}
	if len(archives) != len(targets) {
		t.Errorf("%d archives, want %d", len(archives), len(targets))
	}
	for _, a := range archives {
		b, err := os.ReadFile(filepath.Join(dir, a.Path))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if line := hex.EncodeToString(sum[:]) + "  " + a.Name; !strings.Contains(sums, line+"\n") {
			t.Errorf("checksums.txt lacks %q:\n%s", line, sums)
		}
	}
	exe, ok := built["mcp-conform "+runtime.GOOS+"/"+runtime.GOARCH]
	if !ok || runtime.GOOS == "windows" {
		return
	}
	v, err := exec.Command(exe, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(fmt.Sprintf(`^mcp-conform v\d+\.\d+\.\d+-snapshot\+%s \(commit %s; go`, regexp.QuoteMeta(head[:7]), head))
	if !want.Match(v) {
		t.Errorf("the snapshot's mcp-conform version: %q, want %s", v, want)
	}
}
