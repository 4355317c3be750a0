package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestHTMLTimeline: the page escapes what the target sent, draws one lane
// per exchange named by its request, a fault line and a silence band,
// colours the messages of one request alike (over grey ones), shows SSE
// ids where they fit and the retry field of an event with data.
func TestHTMLTimeline(t *testing.T) {
	r := sample()
	r.Checks[1].Timeline = []Event{
		{At: 0, Lane: "#1", Kind: KindRequest, Group: "id 2", Text: "#1 → POST /mcp\n#1   body {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\"}"},
		{At: 0.01, Lane: "#1", Kind: KindStatus, Text: "#1 ← 200 (after 1ms)"},
		{At: 0.2, Lane: "#1", Kind: KindSSE, Group: "id 2", Text: "#1   | data: <script>alert(1)</script>"},
		{At: 0.2, Lane: "#1", Kind: KindSSE, Text: "#1   | data: grey-at-the-same-time"},
		{At: 0.25, Lane: "#1", Kind: KindSSE, Group: "id 2", Text: "#1   | id: a_1\n#1   | retry: 500\n#1   | data: {}"},
		{At: 0.3, Kind: KindFault, Text: "!! F-REFRESH: every live connection cut"},
		{At: 0.3, Kind: KindSilence, Seconds: 0.4, Text: "silent for 400ms"},
		{At: 0.7, Lane: "#2", Kind: KindRequest, Text: "#2 → GET /mcp Last-Event-ID=\"a_1\""},
		{At: 0.8, Lane: "#2", Kind: KindSSE, Group: "id 2", Text: "#2   | id: a_2"},
		{At: 0.801, Lane: "#2", Kind: KindSSE, Group: "id 2", Text: "#2   | id: a_3_and_a_long_tail"},
	}
	r.Checks[1].Seconds = 1
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`data-lane="#1"`, `#1 POST tools/call`, `#2 GET (resume)`, `class="ev fault"`, `>F-REFRESH<`,
		`class="ev silence"`, `&lt;script&gt;alert(1)&lt;/script&gt;`, `data-check="c-B-FAIL"`, `id="c-B-FAIL" open`, `>1 pass<`, `>1 skip<`, `(1 not selected)`,
		`Findings, root causes first`, `<a href="#c-B-FAIL">B-FAIL</a> (MUST) FAIL: want 404; blocks I-BLOCKED`, `>1 blocked<`, `>1 inconclusive<`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "E-OUT") {
		t.Error("the page holds raw target text or a check that was not selected")
	}
	if n := strings.Count(page, `fill="`+palette[0]+`"`); n != 5 {
		t.Errorf("%d marks in the first request's colour, want its request and four events", n)
	}
	// A grey mark is drawn before (under) a coloured one at the same time.
	if grey, coloured := strings.Index(page, "grey-at-the-same-time"), strings.Index(page, "alert(1)"); grey < 0 || grey > coloured {
		t.Error("a mark of no request is drawn over a coloured one")
	}
	// Ids show where they fit: a_2 has the next event right after it.
	for id, want := range map[string]bool{"a_1": true, "a_2": false, "…long_tail": true} {
		if got := strings.Contains(page, `class="id" x="5" y="7" font-size="8" fill="#555">`+id+`<`); got != want {
			t.Errorf("id label %s shown: %v, want %v", id, got, want)
		}
	}
	if n := strings.Count(page, `class="retry"`); n != 1 {
		t.Errorf("%d retry marks on events with data, want 1", n)
	}
}
