package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/target"
)

// hostileToolNames are tool names a server may send: each would end a YAML
// comment, start a key, or read back as something else if written as it is.
var hostileToolNames = []string{
	"x\nheaders:\n  X-Injected: injected\nrecovery_hint: true\n#",
	"a: b",
	"# not a comment",
	"x #y",
	`"double" and 'single'`,
	"- leading dash",
	"-lead",
	"{flow: [x, y]}",
	"ünïcødé ツール 🔧",
	"ctl\t\r\x1b[2J\x7f\x01\x00",
	"nel\u0085recovery_hint: true",
	"ls\u2028ps\u2029bom\ufeff",
	"yes", "null", "~", "1:20", "017", "<<", "&a *a !t", "? q", "|", ">", "%", "@",
	" lead and trail ",
	`\back\slash`,
	strings.Repeat("long name ", 25),
}

// toolsMCP is an MCP endpoint that speaks 2025-11-25 well enough for
// profile and init, and advertises tools named by an attacker. It counts
// requests, and those that carry X-Injected, the header
// hostileToolNames[0] tries to put into the profile.
type toolsMCP struct {
	tools              []map[string]any
	requests, injected atomic.Int32
}

// candidateTool is a tool every suggestion picks: for tools.notifying and
// tools.stateful by its description, for tools.task by its task support;
// its one argument has the same name.
func candidateTool(name string) map[string]any {
	return map[string]any{
		"name":        name,
		"description": "reports progress of a counter",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{name: map[string]any{}}},
		"execution":   map[string]any{"taskSupport": "optional"},
	}
}

func newToolsMCP(t *testing.T, names ...string) (*toolsMCP, string) {
	t.Helper()
	h := &toolsMCP{}
	for _, n := range names {
		h.tools = append(h.tools, candidateTool(n))
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv.URL + "/mcp"
}

func (h *toolsMCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.requests.Add(1)
	if r.Header.Get("X-Injected") != "" {
		h.injected.Add(1)
	}
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
		return
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	out := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	switch m.Method {
	case "initialize":
		w.Header().Set(wire.HeaderSessionID, "hostile-session")
		out["result"] = map[string]any{"protocolVersion": wire.DefaultProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "hostile", "version": "0"}}
	case "tools/list":
		out["result"] = map[string]any{"tools": h.tools}
	default:
		out["error"] = map[string]any{"code": -32601, "message": "method not found"}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// loadEmpty loads a suggested profile with the project's loader: every
// key is commented out, so it must declare nothing.
func loadEmpty(t *testing.T, path string) {
	t.Helper()
	p, err := target.Load(path)
	if err != nil {
		data, _ := os.ReadFile(path)
		t.Fatalf("the suggestion does not load: %v\n%s", err, data)
	}
	if !reflect.DeepEqual(p, &target.Profile{}) {
		data, _ := os.ReadFile(path)
		t.Fatalf("the suggestion declares %+v, want nothing:\n%s", p, data)
	}
}

// uncommentTools is the suggestion's tools block uncommented, as a user
// would, with each argument given the value 1.
func uncommentTools(text string) string {
	var block []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case line == "# tools:":
			in = true
		case in && line == "":
			in = false
		}
		if in && !strings.HasPrefix(line, "#   #") {
			block = append(block, strings.ReplaceAll(strings.TrimPrefix(line, "# "), ": VALUE", ": 1"))
		}
	}
	return strings.Join(block, "\n")
}

// advertised is the list of tools the suggestion names, read as YAML.
func advertised(t *testing.T, text string) []string {
	t.Helper()
	var list []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "# Tools the server advertises"):
			in = true
		case in && strings.HasPrefix(line, "#   - "):
			list = append(list, strings.TrimPrefix(line, "# "))
		case in:
			in = false
		}
	}
	var names []string
	if err := yaml.Unmarshal([]byte(strings.Join(list, "\n")), &names); err != nil {
		t.Fatalf("the list of advertised tools: %v\n%s", err, text)
	}
	return names
}

// TestProfileHostileToolNames: tool names and argument names a server
// sends go into the profile as YAML values: the file loads with the
// project's loader and declares nothing (a name with line breaks once made
// live keys of it), it lists every name as sent, and the tools block, once
// uncommented, names each tool and argument exactly as the server did.
func TestProfileHostileToolNames(t *testing.T) {
	h, url := newToolsMCP(t, hostileToolNames...)
	out := filepath.Join(t.TempDir(), "profile.yaml")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"profile", "--url", url, "--out", out}, &stdout, &stderr); code != exitOK {
		t.Fatalf("profile: exit %d\n%s", code, stderr.String())
	}
	loadEmpty(t, out)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := advertised(t, string(data)); !slices.Equal(got, hostileToolNames) {
		t.Errorf("the profile lists the tools\n%q\nthe server sent\n%q", got, hostileToolNames)
	}
	if n := h.injected.Load(); n != 0 {
		t.Errorf("%d requests carried X-Injected", n)
	}

	// One server per name, so that the name is every candidate.
	for _, name := range hostileToolNames {
		_, url := newToolsMCP(t, name)
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"profile", "--url", url}, &stdout, &stderr); code != exitOK {
			t.Fatalf("profile for %q: exit %d\n%s", name, code, stderr.String())
		}
		block := uncommentTools(stdout.String())
		p, err := target.Parse([]byte(block))
		if err != nil {
			t.Errorf("tool %q: the uncommented tools block does not load: %v\n%s", name, err, block)
			continue
		}
		if p.Tools.Notifying == nil || p.Tools.Stateful == nil || p.Tools.Task == nil {
			t.Errorf("tool %q: the uncommented tools block declares %+v\n%s", name, p.Tools, block)
			continue
		}
		for key, tl := range map[string]*target.Tool{"notifying": &p.Tools.Notifying.Tool, "stateful": p.Tools.Stateful, "task": &p.Tools.Task.Tool} {
			if tl.Name != name {
				t.Errorf("tools.%s.name is %q, the server's tool %q\n%s", key, tl.Name, name, block)
			}
			if _, ok := tl.Arguments[name]; !ok || len(tl.Arguments) != 1 {
				t.Errorf("tools.%s.arguments are %v, the tool's one argument %q", key, tl.Arguments, name)
			}
		}
	}
}

// TestProfileOutRefuses: --out never replaces a file without --force, as
// init does not (it once did, silently), and never writes through a
// symbolic link, dangling or not, even with --force: exit 2, with the
// server not asked anything.
func TestProfileOutRefuses(t *testing.T) {
	h, url := newToolsMCP(t, "long_operation")
	dir := t.TempDir()
	taken := filepath.Join(dir, "taken.yaml")
	elsewhere := filepath.Join(t.TempDir(), "elsewhere.yaml")
	dangling := filepath.Join(dir, "dangling.yaml")
	pointing := filepath.Join(dir, "pointing.yaml")
	for _, err := range []error{
		os.WriteFile(taken, []byte("X\n"), 0o644),
		os.WriteFile(elsewhere, []byte("E\n"), 0o644),
		os.Symlink(filepath.Join(dir, "nowhere.yaml"), dangling),
		os.Symlink(elsewhere, pointing),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", taken}, taken + " exists: nothing written (--force overwrites)"},
		{[]string{"--out", dangling}, dangling + " is a symbolic link"},
		{[]string{"--out", dangling, "--force"}, dangling + " is a symbolic link"},
		{[]string{"--out", pointing, "--force"}, pointing + " is a symbolic link"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"profile", "--url", url}, tc.args...)
		if code := run(context.Background(), args, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 containing %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	for path, want := range map[string]string{taken: "X\n", elsewhere: "E\n"} {
		if data, _ := os.ReadFile(path); string(data) != want {
			t.Errorf("a refused profile changed %s: %q", path, data)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere.yaml")); err == nil {
		t.Errorf("a refused profile created the file a dangling link points to")
	}
	if n := h.requests.Load(); n != 0 {
		t.Errorf("refused profiles sent the server %d requests", n)
	}

	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"profile", "--url", url, "--out", taken, "--force"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("--force: exit %d\n%s", code, stderr.String())
	}
	loadEmpty(t, taken)
	if data, _ := os.ReadFile(taken); !strings.Contains(string(data), `#     name: "long_operation"`) {
		t.Errorf("--force wrote\n%s", data)
	}
}

// TestSuggestProfileHostile: the profile a run suggests (--suggest-profile)
// is written from the same tool names as profile's, and as safely: it loads
// and declares nothing, lists every name as sent, and is not written
// through a symbolic link.
func TestSuggestProfileHostile(t *testing.T) {
	h, url := newToolsMCP(t, hostileToolNames...)
	dir := t.TempDir()
	suggested := filepath.Join(dir, "suggested.yaml")
	server := func(path string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		run(context.Background(), []string{"server", "--url", url, "--protocol-version", wire.DefaultProtocolVersion,
			"--focus", "^MSG-ONE-STREAM$", "--suggest-profile", path}, &stdout, &stderr)
		return stdout.String()
	}
	out := server(suggested)
	loadEmpty(t, suggested)
	data, _ := os.ReadFile(suggested)
	if got := advertised(t, string(data)); !slices.Equal(got, hostileToolNames) {
		t.Errorf("the suggestion lists the tools\n%q\nthe server sent\n%q\n%s", got, hostileToolNames, out)
	}
	if n := h.injected.Load(); n != 0 {
		t.Errorf("%d requests carried X-Injected", n)
	}

	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(filepath.Join(dir, "nowhere.yaml"), link); err != nil {
		t.Fatal(err)
	}
	if out := server(link); !strings.Contains(out, "No suggested profile written: write "+link+": is a symbolic link") {
		t.Errorf("a run with --suggest-profile at a link says:\n%s", out)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere.yaml")); err == nil {
		t.Errorf("the suggestion was written through a link")
	}
}
