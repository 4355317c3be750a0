package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// refServer is the reference server on a loopback port with a fake clock:
// tool steps and expiry happen exactly when a test says.
type refServer struct {
	t     *testing.T
	srv   *server.Server
	url   string
	clock *clocktesting.FakeClock
}

func newRefServer(t *testing.T, cfg server.Config) *refServer {
	t.Helper()
	fc := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg.Clock = fc
	cfg.SSEKeepAlive = -1 // the clock's only waiters are then the tools'
	cfg.ReaperInterval, cfg.IdleThreshold, cfg.GracePeriod = time.Second, 2*time.Second, 10*time.Second
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		hs.CloseClientConnections()
		hs.Close()
	})
	return &refServer{t: t, srv: srv, url: hs.URL, clock: fc}
}

// step advances the clock by one long_operation step once a step timer waits.
func (s *refServer) step() {
	s.t.Helper()
	waitFor(s.t, "a step timer", s.clock.HasWaiters)
	s.clock.Step(time.Second)
}

// expire ends every session as the reaper would after idle + grace.
func (s *refServer) expire() {
	s.t.Helper()
	waitFor(s.t, "no request in flight", func() bool { return s.srv.InFlight() == 0 })
	s.clock.Step(2*time.Second + time.Millisecond)
	s.srv.Reap()
	s.clock.Step(10 * time.Second)
	waitFor(s.t, "sessions to expire", func() bool { return s.srv.SessionCount() == 0 })
}

// waitFor polls cond until it holds or 10s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// line is any line call prints.
type line struct {
	Type        string          `json:"type"`
	Status      string          `json:"status"`
	SessionID   string          `json:"session_id"`
	Reconnected bool            `json:"reconnected"`
	NewSession  bool            `json:"new_session"`
	Stream      string          `json:"stream"`
	EventID     string          `json:"event_id"`
	Method      string          `json:"method"`
	Params      json.RawMessage `json:"params"`
	Tool        string          `json:"tool"`
	Result      json.RawMessage `json:"result"`
	Tools       []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Error string `json:"error"`
}

// step renders a notification line as p<N> (progress) or l<N> (log).
func (l line) step() string {
	var p struct {
		Progress float64 `json:"progress"`
		Data     string  `json:"data"`
	}
	json.Unmarshal(l.Params, &p)
	if l.Method == "notifications/progress" {
		return fmt.Sprintf("p%d", int(p.Progress))
	}
	var i, n int
	fmt.Sscanf(p.Data, "step %d of %d", &i, &n)
	return fmt.Sprintf("l%d", i)
}

func (l line) text(t *testing.T) string {
	t.Helper()
	var r struct {
		Content    []struct{ Text string } `json:"content"`
		Structured json.RawMessage         `json:"structuredContent"`
	}
	if err := json.Unmarshal(l.Result, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("result line %s: %v", l.Result, err)
	}
	return r.Content[0].Text
}

func parseLines(t *testing.T, out string) []line {
	t.Helper()
	var ls []line
	for _, s := range strings.Split(strings.TrimSpace(out), "\n") {
		if s == "" {
			continue
		}
		var l line
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			t.Fatalf("stdout line %q is not JSON: %v", s, err)
		}
		ls = append(ls, l)
	}
	return ls
}

// callRun runs call in-process and returns its lines, exit code and stderr.
func callRun(t *testing.T, args ...string) ([]line, int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	code := run(ctx, append([]string{"call"}, args...), &stdout, &stderr)
	return parseLines(t, stdout.String()), code, stderr.String()
}

// proc is a call process whose stdout lines a test reads one at a time.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	lines  chan line
	stderr *bytes.Buffer
	done   chan struct{}
}

func startCall(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"call"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, lines: make(chan line, 1000), stderr: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
	})
	go func() {
		defer close(p.done)
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var l line
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				l = line{Type: "garbage", Error: sc.Text()}
			}
			p.lines <- l
		}
		io.Copy(io.Discard, stdout)
	}()
	return p
}

// next returns the next line; ok is false at the end of the output.
func (p *proc) next() (line, bool) {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if l.Type == "garbage" {
			p.t.Fatalf("call printed a non-JSON line: %s", l.Error)
		}
		return l, ok
	case <-time.After(15 * time.Second):
		p.t.Fatalf("no line from call within 15s; stderr:\n%s", p.stderr.String())
		return line{}, false
	}
}

// until reads lines until one matches and returns all of them.
func (p *proc) until(what string, match func(line) bool) []line {
	p.t.Helper()
	var got []line
	for {
		l, ok := p.next()
		if !ok {
			p.t.Fatalf("output ended before %s; got %+v\nstderr:\n%s", what, got, p.stderr.String())
		}
		got = append(got, l)
		if match(l) {
			return got
		}
	}
}

// rest reads every remaining line and waits for the exit.
func (p *proc) rest() ([]line, int) {
	p.t.Helper()
	var got []line
	for {
		l, ok := p.next()
		if !ok {
			break
		}
		got = append(got, l)
	}
	err := p.cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatal(err)
	}
	return got, code
}

// kill is the refresh: SIGKILL, no goodbye of any kind.
func (p *proc) kill() []line {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatal(err)
	}
	got, _ := p.rest()
	return got
}

func isStatus(s string) func(line) bool {
	return func(l line) bool { return l.Type == "status" && l.Status == s }
}

func notifications(ls []line) []line {
	var out []line
	for _, l := range ls {
		if l.Type == "notification" {
			out = append(out, l)
		}
	}
	return out
}

func stepsOf(ls []line) string {
	var parts []string
	for _, l := range notifications(ls) {
		parts = append(parts, l.step())
	}
	return strings.Join(parts, " ")
}

// TestE2ECallRefresh is the page refresh: a call process is SIGKILLed in the
// middle of long_operation, steps run while it is dead, and `call --resume`
// with the same state directory rejoins the same session and prints every
// remaining notification exactly once, then the result (CLI-PERSIST,
// CLI-RECONNECT, CLI-RESUME), in both rejoin modes.
func TestE2ECallRefresh(t *testing.T) {
	skipShort(t, "builds and kills the binary")
	bin := buildCLI(t)
	for _, mode := range []string{"auto", "reuse"} {
		t.Run(mode, func(t *testing.T) {
			s := newRefServer(t, server.Config{})
			dir := t.TempDir()
			common := []string{"--state-dir", dir, "--reconnect", mode, "--reconnect-delay", "20ms", "--max-reconnect-delay", "100ms", "-v"}
			first := startCall(t, bin, append(common, "--url", s.url, "long_operation", `{"steps":4,"interval_ms":1000}`)...)
			before := first.until("connected", isStatus("connected"))
			sid := before[len(before)-1].SessionID
			s.step()
			before = append(before, first.until("step 1's log line", func(l line) bool { return l.Method == "notifications/message" })...)
			before = append(before, first.kill()...)
			waitFor(t, "the server to notice the kill", func() bool { return s.srv.InFlight() == 0 })
			s.step() // steps 2 and 3 happen while no client is there
			s.step()

			second := startCall(t, bin, append(common, "--resume")...)
			after := second.until("connected", isStatus("connected"))
			if c := after[len(after)-1]; c.SessionID != sid || !c.Reconnected || c.NewSession {
				t.Fatalf("rejoined %+v, want reconnected to %s", c, sid)
			}
			after = append(after, second.until("step 3's log line", func(l line) bool { return l.step() == "l3" })...)
			s.step()
			rest, code := second.rest()
			after = append(after, rest...)
			if code != 0 {
				t.Fatalf("call --resume exit %d; stderr:\n%s", code, second.stderr.String())
			}
			if got := stepsOf(before) + " | " + stepsOf(after); got != "p1 l1 | p2 l2 p3 l3 p4 l4" {
				t.Fatalf("notifications: %s", got)
			}
			last := after[len(after)-1]
			if last.Type != "result" || last.text(t) != "completed 4 steps" {
				t.Fatalf("last line %+v, want the result", last)
			}
			seen := map[string]bool{}
			for _, l := range notifications(append(before, after...)) {
				if l.EventID == "" || seen[l.EventID] {
					t.Fatalf("event id %q missing or repeated", l.EventID)
				}
				seen[l.EventID] = true
			}
		})
	}
}

// TestCallUsage: bad command lines exit 2 with a message; -h exits 0.
func TestCallUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"call", "echo"}, "--state-dir is required"},
		{[]string{"call", "--state-dir", dir, "--resume", "echo"}, "take no TOOL"},
		{[]string{"call", "--state-dir", dir, "--resume", "--disconnect"}, "exclude each other"},
		{[]string{"call", "--state-dir", dir, "echo", "[1]"}, "JSON_ARGS must be a JSON object"},
		{[]string{"call", "--state-dir", dir, "echo", "{}", "extra"}, "unexpected arguments: extra"},
		{[]string{"call", "--state-dir", dir, "--reconnect", "sometimes"}, "--reconnect must be auto, reinit or reuse"},
		{[]string{"call", "--state-dir", dir, "--reconnect-delay", "0s"}, "must be positive"},
		{[]string{"call", "--state-dir", dir, "--timeout", "-1s"}, "must not be negative"},
		{[]string{"call", "--state-dir", dir, "--bogus"}, "flag provided but not defined"},
		{[]string{"call", "--state-dir", dir, "--protocol-version", "2099-01-01"}, "is not supported; use one of"},
		{[]string{"call", "--state-dir", dir, "--protocol-version", "2026-07-28", "--disconnect"}, "no session to --disconnect"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 containing %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"call", "-h"}, io.Discard, &stderr); code != exitOK || !strings.Contains(stderr.String(), "--resume") && !strings.Contains(stderr.String(), "-resume") {
		t.Errorf("call -h: exit %d, %q", code, stderr.String())
	}
}

// TestCallTools: without TOOL, call lists the tools; a second run rejoins
// the stored session (CLI-PERSIST, CLI-RECONNECT) and sees the same tools.
func TestCallTools(t *testing.T) {
	s := newRefServer(t, server.Config{BearerTokens: map[string]string{"secret": "alice"}})
	dir := t.TempDir()
	first, code, stderr := callRun(t, "--url", s.url, "--state-dir", dir, "--bearer-token", "secret")
	if code != 0 || len(first) != 3 || first[0].Status != "connecting" || first[1].Status != "connected" || first[2].Type != "tools" || len(first[2].Tools) != 5 {
		t.Fatalf("first run: exit %d, %+v, stderr %s", code, first, stderr)
	}
	// No URL, no token: both come from the state directory.
	second, code, stderr := callRun(t, "--state-dir", dir)
	if code != 0 || len(second) != 3 || second[0].Status != "reconnecting" || !second[1].Reconnected || second[1].SessionID != first[1].SessionID {
		t.Fatalf("second run: exit %d, %+v, stderr %s", code, second, stderr)
	}
	if len(second[2].Tools) != len(first[2].Tools) {
		t.Fatalf("tools %v, then %v", first[2].Tools, second[2].Tools)
	}
}

// TestCallReaped: the session expires between two runs. The next run falls
// back to a new session (CLI-FALLBACK), keeps the envelope's resume hint,
// and its job_start carries the stored resume token: the conversation goes
// on at turn 2 (CLI-ENVELOPE).
func TestCallReaped(t *testing.T) {
	s := newRefServer(t, server.Config{})
	dir := t.TempDir()
	args := func(more ...string) []string { return append([]string{"--url", s.url, "--state-dir", dir}, more...) }
	job := func(start string) (snap struct {
		ConversationID string `json:"conversation_id"`
		Turn           int    `json:"turn"`
		Status         string `json:"status"`
	}, ls []line) {
		t.Helper()
		ls, code, stderr := callRun(t, args("job_start", start)...)
		if code != 0 {
			t.Fatalf("job_start: exit %d %s", code, stderr)
		}
		var started struct {
			Structured struct {
				JobID string `json:"job_id"`
			} `json:"structuredContent"`
		}
		json.Unmarshal(ls[len(ls)-1].Result, &started)
		waitFor(t, "the job", func() bool {
			got, code, stderr := callRun(t, args("job_get", fmt.Sprintf(`{"job_id":%q}`, started.Structured.JobID))...)
			if code != 0 {
				t.Fatalf("job_get: exit %d %s", code, stderr)
			}
			var r struct {
				Structured json.RawMessage `json:"structuredContent"`
			}
			json.Unmarshal(got[len(got)-1].Result, &r)
			json.Unmarshal(r.Structured, &snap)
			return snap.Status == "completed"
		})
		return snap, ls
	}
	first, ls := job(`{"steps":1,"interval_ms":0}`)
	old := ls[1].SessionID
	s.expire()
	second, ls := job(`{"steps":1,"interval_ms":0}`)
	var trail []string
	for _, l := range ls {
		if l.Type == "status" {
			trail = append(trail, l.Status)
		}
	}
	if got := strings.Join(trail, " "); got != "reconnecting connecting connected" {
		t.Fatalf("status lines after the expiry: %s", got)
	}
	if ls[2].SessionID == old || !ls[2].NewSession {
		t.Fatalf("connected %+v, want a new session", ls[2])
	}
	if second.ConversationID != first.ConversationID || second.Turn != 2 {
		t.Fatalf("job after the expiry: %+v, want turn 2 of %s", second, first.ConversationID)
	}
}

// TestCallDisconnect covers CLI-CLEAR-ON-DISCONNECT from the command line:
// --disconnect ends the session on the server and clears it; the next run
// starts afresh.
func TestCallDisconnect(t *testing.T) {
	s := newRefServer(t, server.Config{})
	dir := t.TempDir()
	if _, code, stderr := callRun(t, "--url", s.url, "--state-dir", dir, "echo", `{"text":"hi"}`); code != 0 {
		t.Fatalf("echo: exit %d %s", code, stderr)
	}
	ls, code, stderr := callRun(t, "--state-dir", dir, "--disconnect")
	if code != 0 || len(ls) != 1 || ls[0].Status != "disconnected" {
		t.Fatalf("--disconnect: exit %d %+v %s", code, ls, stderr)
	}
	if n := s.srv.SessionCount(); n != 0 {
		t.Fatalf("%d sessions left on the server", n)
	}
	ls, code, _ = callRun(t, "--state-dir", dir)
	if code != 0 || ls[0].Status != "connecting" {
		t.Fatalf("after --disconnect: exit %d, first line %+v; want a fresh start", code, ls[0])
	}
}

// TestCallFailures: failures exit 1 with a message on stderr and an error
// line on stdout; a tool error result is printed, then exits 1.
func TestCallFailures(t *testing.T) {
	s := newRefServer(t, server.Config{})
	for _, tc := range []struct {
		args       []string
		want       string
		lastIsType string
	}{
		{[]string{"no_such_tool"}, "no_such_tool", "error"},
		{[]string{"long_operation", `{"steps":0,"interval_ms":0}`}, "returned an error result", "error"},
		{[]string{"--resume"}, "no call in flight", "error"},
	} {
		ls, code, stderr := callRun(t, append([]string{"--url", s.url, "--state-dir", t.TempDir()}, tc.args...)...)
		if code != exitFail || !strings.Contains(stderr, tc.want) || ls[len(ls)-1].Type != tc.lastIsType {
			t.Errorf("%v: exit %d, stderr %q, lines %+v", tc.args, code, stderr, ls)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, code, stderr := callRun(t, "--url", s.url, "--state-dir", dir); code != exitFail || !strings.Contains(stderr, "corrupt") {
		t.Errorf("corrupt state: exit %d, stderr %q", code, stderr)
	}
}

// TestCallTaskModern: call --task --protocol-version 2026-07-28 connects
// with no session, prints the task's lines and its result, lists the tools,
// makes a plain call; --resume of a task the server does not know says it
// is forgotten and fails.
func TestCallTaskModern(t *testing.T) {
	s := newRefServer(t, server.Config{TaskPollInterval: 20 * time.Millisecond})
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"call", "--state-dir", dir, "--url", s.url, "--protocol-version", "2026-07-28",
			"--task", "long_operation", `{"steps":1,"interval_ms":1000}`}, &stdout, &stderr)
	}()
	s.step()
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	var got []string
	for _, l := range parseLines(t, stdout.String()) {
		if l.SessionID != "" {
			t.Errorf("a line names session %s under 2026-07-28", l.SessionID)
		}
		switch l.Type {
		case "status", "task":
			got = append(got, l.Type+" "+l.Status)
		case "result":
			got = append(got, "result "+l.text(t))
		}
	}
	if want := "status connecting, status connected, task working, task completed, result completed 1 steps"; strings.Join(got, ", ") != want {
		t.Fatalf("lines %q, want %q", strings.Join(got, ", "), want)
	}

	stdout.Reset()
	if code := run(context.Background(), []string{"call", "--state-dir", dir, "--protocol-version", "2026-07-28"}, &stdout, io.Discard); code != exitOK || !strings.Contains(stdout.String(), `"name":"long_operation"`) {
		t.Fatalf("tools under 2026-07-28: exit %d\n%s", code, stdout.String())
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"call", "--state-dir", dir, "--protocol-version", "2026-07-28", "echo", `{"text":"plain"}`}, &stdout, io.Discard); code != exitOK || !strings.Contains(stdout.String(), `"text":"plain"`) {
		t.Fatalf("a plain call under 2026-07-28: exit %d\n%s", code, stdout.String())
	}

	st, err := storage.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Set(client.KeyTask, `{"task_id":"GONEGONEGONEGONEGONEGONEGO","tool":"long_operation","status":"working"}`); err != nil {
		t.Fatal(err)
	}
	st.Close()
	stdout.Reset()
	code := run(context.Background(), []string{"call", "--state-dir", dir, "--protocol-version", "2026-07-28", "--resume"}, &stdout, io.Discard)
	if code != exitFail || !strings.Contains(stdout.String(), "task GONEGONEGONEGONEGONEGONEGO is gone, forgotten") {
		t.Fatalf("resume of an unknown task: exit %d\n%s", code, stdout.String())
	}
}

// TestCallAnswers: --elicit, --elicit-content, --sample and --root answer
// the server's requests on the call's stream (the reference server's
// conformance tools ask them); without them the requests are refused.
func TestCallAnswers(t *testing.T) {
	s := newRefServer(t, server.Config{ConformanceTools: true})
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--elicit", "accept", "--elicit-content", `{"username":"ann"}`, "test_elicitation_sep1034_defaults", `{}`}, `action=accept, content={\"age\":30,\"name\":\"John Doe\",\"score\":95.5,\"status\":\"active\",\"username\":\"ann\",\"verified\":true}`, exitOK},
		{[]string{"--elicit", "decline", "test_elicitation", `{}`}, "action=decline", exitOK},
		{[]string{"--sample", "it is sunny", "test_sampling", `{"prompt":"weather?"}`}, `it is sunny`, exitOK},
		{[]string{"test_sampling", `{"prompt":"weather?"}`}, `"type":"error"`, exitFail},
	} {
		var stdout bytes.Buffer
		args := append([]string{"call", "--state-dir", t.TempDir(), "--url", s.url}, tc.args...)
		code := run(context.Background(), args, &stdout, io.Discard)
		if code != tc.code || !strings.Contains(stdout.String(), tc.want) {
			t.Errorf("%v: exit %d, want %d with %q in\n%s", tc.args, code, tc.code, tc.want, stdout.String())
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--elicit", "maybe"}, "--elicit must be accept, decline or cancel"},
		{[]string{"--elicit-content", `{}`}, "--elicit-content needs --elicit accept"},
		{[]string{"--elicit", "accept", "--elicit-content", `[1]`}, "must be a JSON object"},
	} {
		var stderr bytes.Buffer
		code := run(context.Background(), append([]string{"call", "--state-dir", t.TempDir()}, tc.args...), io.Discard, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 containing %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
