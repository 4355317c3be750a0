package inert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// hostile is text a target might send to act on whoever reads the output.
var hostile = []string{
	"\x1b[2J\x1b[H", // clear the screen
	"\x1b[1A\x1b[2KPASSED",
	"\x1b]52;c;ZXZpbA==\x07", // OSC 52: write the clipboard
	"\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\", // OSC 8 link
	"nul\x00byte", "bare\rCR", "crlf\r\n::error::forged",
	"\xff\xfe invalid \xc3", "\u009b31m C1 CSI", "bidi \u202eevil\u202c",
	"::add-mask::FAIL", "  ::stop-commands::TOKEN", "\u00a0::error::nbsp", "\u3000::warning::ideographic space",
	"session ##[error]sid-7", "x\n::group::g\n##[endgroup]",
	"line\u2028separator",
}

func TestEscapeIsInert(t *testing.T) {
	for _, s := range hostile {
		out := Escape(s)
		if bad := Problems(out); len(bad) > 0 {
			t.Errorf("Escape(%q) = %q: %v", s, out, bad)
		}
	}
}

// TestEscapeKeepsText: ordinary text, tabs and lines pass unchanged, and
// a colon pair inside a line (a URL, a time) is no command.
func TestEscapeKeepsText(t *testing.T) {
	for _, s := range []string{"PASS  SESS-DELETE\t0.02s", "a\nb", "http://127.0.0.1:8080/mcp at 10:12:13", "ünïcödé ✓ 日本", "a ::b:: c", ""} {
		if got := Escape(s); got != s {
			t.Errorf("Escape(%q) = %q, want it unchanged", s, got)
		}
	}
	for in, want := range map[string]string{
		"\x1b[2J":          `\x1b[2J`,
		"::error::x":       `:\u003aerror::x`,
		"  ::error::x":     `  :\u003aerror::x`,
		"a ##[error]b":     `a #\u0023[error]b`,
		"\xff":             `\xff`,
		"\u202e":           `\u202e`,
		"bare\rCR":         `bare\x0dCR`,
		"\x7f\u0085\u009b": `\x7f\u0085\u009b`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEscapeKeepsJSON: a JSON line (the client contract's, the call
// command's) stays valid JSON with the same value, its commands broken.
func TestEscapeKeepsJSON(t *testing.T) {
	v := map[string]string{"error": "##[error]x", "m": "::add-mask::FAIL", "b": "\u202eevil", "e": "\x1b[2J"}
	data, _ := json.Marshal(v)
	out := Escape(string(data))
	var got map[string]string
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("Escape(%s) = %s: no longer JSON: %v", data, out, err)
	}
	for k := range v {
		if got[k] != v[k] {
			t.Errorf("%s: %q, want %q", k, got[k], v[k])
		}
	}
	if bad := Problems(out); len(bad) > 0 {
		t.Errorf("%s: %v", out, bad)
	}
}

func TestBound(t *testing.T) {
	s := strings.Repeat("é", 5000) + "END"
	got := Bound(s, 1000)
	if len(got) > 1000 || !utf8.ValidString(got) || !strings.HasPrefix(got, "éé") || !strings.HasSuffix(got, "END") {
		t.Errorf("Bound: %d bytes, valid %v, %q…%q", len(got), utf8.ValidString(got), got[:10], got[len(got)-10:])
	}
	if !strings.Contains(got, fmt.Sprintf("of %d, sha256 ", len(s))) {
		t.Errorf("Bound does not say the full length: %q", got)
	}
	if Bound("short", 1000) != "short" {
		t.Error("Bound changed a short text")
	}
}

func TestWriter(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	for _, chunk := range []string{"ok line\n::err", "or::forged\n##", "[error] x\npartial \x1b"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(out.String(), "partial") {
		t.Errorf("a line was passed on before its newline or Flush: %q", out.String())
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "ok line\n:\\u003aerror::forged\n#\\u0023[error] x\npartial \\x1b"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}

	out.Reset()
	long := strings.Repeat("A", 10*MaxLine) + "\n"
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { _, _ = w.Write([]byte(long)) })
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4", len(lines))
	}
	for _, l := range lines {
		if len(l) > MaxLine || !strings.Contains(l, "left out of") {
			t.Errorf("a line of %d bytes, want at most %d, cut with a note: %q", len(l), MaxLine, l[len(l)-120:])
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		if bad := Problems(out); len(bad) > 0 {
			t.Fatalf("Escape(%q) = %q: %v", s, out, bad)
		}
		if strings.Count(out, "\n") != strings.Count(s, "\n") {
			t.Fatalf("Escape(%q) = %q changed the lines", s, out)
		}
	})
}

// TestWorkflowCommand: the runner's rules, as the tests apply them.
func TestWorkflowCommand(t *testing.T) {
	for line, want := range map[string]bool{
		"::error::x": true, "  ::add-mask::FAIL": true, "\u00a0::stop-commands::T": true, "x ##[error]y": true,
		"::endgroup::": true, "::": false, "a ::b::": false, "##[ no bracket": false, "PASS x": false,
	} {
		if got := WorkflowCommand(line); got != want {
			t.Errorf("WorkflowCommand(%q) = %v, want %v", line, got, want)
		}
	}
	if got := RunnerLines("a\rb\r\nc\nd"); strings.Join(got, "|") != "a|b|c|d" {
		t.Errorf("RunnerLines: %q", got)
	}
}
