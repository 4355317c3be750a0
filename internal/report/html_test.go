package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestHTMLTimeline: the page escapes what the target sent, draws one lane
// per exchange named by its request, a fault line and a silence band,
// and colours the messages of one request alike.
func TestHTMLTimeline(t *testing.T) {
	r := sample()
	r.Checks[1].Timeline = []Event{
		{At: 0, Lane: "#1", Kind: KindRequest, Group: "id 2", Text: "#1 → POST /mcp\n#1   body {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\"}"},
		{At: 0.01, Lane: "#1", Kind: KindStatus, Text: "#1 ← 200 (after 1ms)"},
		{At: 0.2, Lane: "#1", Kind: KindSSE, Group: "id 2", Text: "#1   | data: <script>alert(1)</script>"},
		{At: 0.3, Kind: KindFault, Text: "!! F-REFRESH: every live connection cut"},
		{At: 0.3, Kind: KindSilence, Seconds: 0.4, Text: "silent for 400ms"},
		{At: 0.7, Lane: "#2", Kind: KindRequest, Text: "#2 → GET /mcp Last-Event-ID=\"a_1\""},
		{At: 0.8, Lane: "#2", Kind: KindSSE, Group: "id 2", Text: "#2   | id: a_2"},
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
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "E-OUT") {
		t.Error("the page holds raw target text or a check that was not selected")
	}
	if n := strings.Count(page, `fill="`+palette[0]+`"`); n != 3 {
		t.Errorf("%d marks in the first request's colour, want its request and two events", n)
	}
}
