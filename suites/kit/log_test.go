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
// the request, its notification (by progress token) and its response
// (by id) share a group.
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
	want := []string{"#1 request id 7", "#1 status ", "#1 retry ", "#1 comment ", "#1 sse id 7", "#1 sse id 7", "#1 end ", "#1 closed ", " fault "}
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
