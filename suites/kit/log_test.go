package kit_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/report"
	. "github.com/mcp-conform/mcp-conform/suites/kit"
)

// TestRecorderTimeline: an SSE exchange through a Recorder becomes one
// lane of events: the request, its status, one event per SSE event (a
// priming event with only a retry field is a retry), a comment, the end;
// the request, its notification (by progress token), its response (by
// id) and the priming event of its stream share a group.
func TestRecorderTimeline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: a_0\nretry: 500\ndata:\n\n: keep-alive\n\n")
		fmt.Fprint(w, `id: a_1`+"\n"+`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1}}`+"\n\n")
		fmt.Fprint(w, `id: a_2`+"\n"+`data: {"jsonrpc":"2.0","id":7,"result":{}}`+"\n\n")
	}))
	defer srv.Close()
	log := NewLog()
	c := &http.Client{Transport: &Recorder{Base: http.DefaultTransport, Log: log}}
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"tok"}}}`
	resp, err := c.Post(srv.URL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	log.Printf("!! F-REFRESH: every live connection cut")

	var got []string
	for _, e := range log.Events() {
		got = append(got, fmt.Sprintf("%s %s %s", e.Lane, e.Kind, e.Group))
	}
	want := []string{"#1 request #1 id 7", "#1 status ", "#1 retry #1 id 7", "#1 comment ", "#1 sse #1 id 7", "#1 sse #1 id 7", "#1 end ", "#1 closed ", " fault "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ev := log.Events()[4]; !strings.Contains(ev.Text, "#1   | id: a_1\n#1   | data: {") {
		t.Errorf("an SSE event's raw lines: %q", ev.Text)
	}
	if !strings.Contains(log.String(), "#1   | : keep-alive") {
		t.Errorf("the text log lost a line:\n%s", log.String())
	}
}

// TestTimelineBounded: past report.MaxEvents, events are counted, not kept.
func TestTimelineBounded(t *testing.T) {
	log := NewLog()
	for i := range report.MaxEvents + 10 {
		log.Printf("line %d", i)
	}
	evs := log.Events()
	if len(evs) != report.MaxEvents+1 || evs[len(evs)-1].Text != "10 more events not kept" {
		t.Errorf("%d events, the last %+v", len(evs), evs[len(evs)-1])
	}
}

// TestRecorderGroups: through a real Recorder, the messages of one call
// share a group on every stream they take. On the call's POST stream its
// progress and log notifications and the priming event take the call's
// group; on a standalone GET its progress notification does (by token),
// and so does the log message right after it; a GET resuming the POST
// stream (Last-Event-ID) is the call's, its log message and response too;
// another session's request with the same JSON-RPC id is another group.
func TestRecorderGroups(t *testing.T) {
	progress := `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":%d}}` + "\n\n"
	message := `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"step"}}` + "\n\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		switch {
		case r.Method == http.MethodPost:
			fmt.Fprint(w, "id: p_0\nretry: 500\ndata:\n\n")
			fmt.Fprintf(w, "id: p_1\n"+progress, 1)
			fmt.Fprint(w, "id: p_2\n"+message) // and the stream is cut
		case r.Header.Get("Last-Event-ID") != "":
			fmt.Fprint(w, "id: p_3\n"+message)
			fmt.Fprint(w, "id: p_4\n"+`data: {"jsonrpc":"2.0","id":1,"result":{}}`+"\n\n")
		default:
			fmt.Fprintf(w, "id: g_0\n"+progress, 2)
			fmt.Fprint(w, "id: g_1\n"+message)
			fmt.Fprint(w, "id: g_2\n"+message) // not after a progress notification
		}
	}))
	defer srv.Close()
	log := NewLog()
	c := &http.Client{Transport: &Recorder{Base: http.DefaultTransport, Log: log}}
	send := func(method, session, lastID, body string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Mcp-Session-Id", session)
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"tok"}}}`
	send(http.MethodPost, "A", "", call)
	send(http.MethodGet, "A", "", "")
	send(http.MethodGet, "A", "p_2", "")
	send(http.MethodPost, "B", "", call)

	got := map[string][]string{}
	for _, e := range log.Events() {
		if e.Kind == report.KindSSE || e.Kind == report.KindRetry || e.Kind == report.KindRequest {
			got[e.Lane] = append(got[e.Lane], e.Group)
		}
	}
	want := map[string][]string{
		"#1": {"s1 id 1", "s1 id 1", "s1 id 1", "s1 id 1"}, // request, priming, progress, message
		"#2": {"", "s1 id 1", "s1 id 1", ""},               // GET, progress, its message, a message of no call
		"#3": {"s1 id 1", "s1 id 1", "s1 id 1"},            // resume, message, response
		"#4": {"s2 id 1", "s2 id 1", "s2 id 1", "s2 id 1"}, // the same id in session B
	}
	for lane, w := range want {
		if strings.Join(got[lane], "|") != strings.Join(w, "|") {
			t.Errorf("lane %s: groups %q, want %q", lane, got[lane], w)
		}
	}
}

// TestLogKeepsHeadAndTail: a log past its bound keeps its beginning and
// its end, and says how many lines between them it did not keep.
func TestLogKeepsHeadAndTail(t *testing.T) {
	log := NewLog()
	pad := strings.Repeat("x", 100)
	for i := range 5000 {
		log.Printf("line %d %s", i, pad)
	}
	log.Printf("the end")
	s := log.String()
	if len(s) > 70<<10 {
		t.Errorf("the log holds %d bytes; want it bounded", len(s))
	}
	for _, want := range []string{"line 0 ", "lines not kept", "line 4999 ", "the end"} {
		if !strings.Contains(s, want) {
			t.Errorf("the log lost %q", want)
		}
	}
	if strings.Index(s, "lines not kept") > strings.Index(s, "the end") {
		t.Errorf("the note is not between the beginning and the end")
	}
}

// TestRecorderLongLine: a body line of 1 MiB is logged as its beginning,
// its length and its hash, and costs the log no more; the line after it
// is logged whole.
func TestRecorderLongLine(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, long+"\nafter\n")
	}))
	defer srv.Close()
	log := NewLog()
	c := &http.Client{Transport: &Recorder{Base: http.DefaultTransport, Log: log}}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	text := log.String()
	if !strings.Contains(text, fmt.Sprintf("a line of %d bytes, sha256 ", len(long))) || !strings.Contains(text, "| after") {
		t.Errorf("log:\n%.3000s", text)
	}
	if len(text) > 4<<10 {
		t.Errorf("the log is %d bytes for two lines", len(text))
	}
}
