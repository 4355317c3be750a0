package clientchecks

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-conform/mcp-conform/contract"
)

func isNotification(l outLine) bool { return l.Type == contract.LineNotification }

// isLog reports a notifications/message line.
func isLog(l outLine) bool { return isNotification(l) && l.Method == "notifications/message" }

// logStep matches the log line of a long_operation step.
func logStep(i int) func(outLine) bool {
	return func(l outLine) bool {
		return isLog(l) && strings.HasPrefix(logData(l.Params), fmt.Sprintf("step %d of", i))
	}
}

// logData is the data of a notifications/message's params.
func logData(params json.RawMessage) string {
	var p struct {
		Data json.RawMessage `json:"data"`
	}
	json.Unmarshal(params, &p)
	var s string
	if json.Unmarshal(p.Data, &s) == nil {
		return s
	}
	return string(p.Data)
}

// steps renders the notifications of long_operation as p<N> (progress) and
// l<N> (log), in the order printed.
func steps(lines []outLine) []string {
	var out []string
	for _, l := range lines {
		if !isNotification(l) {
			continue
		}
		var p struct {
			Progress float64 `json:"progress"`
		}
		switch l.Method {
		case "notifications/progress":
			json.Unmarshal(l.Params, &p)
			out = append(out, fmt.Sprintf("p%d", int(p.Progress)))
		case "notifications/message":
			var i, n int
			fmt.Sscanf(logData(l.Params), "step %d of %d", &i, &n)
			out = append(out, fmt.Sprintf("l%d", i))
		}
	}
	return out
}

// allSteps is what a long_operation of n steps sends, in order: a log
// message a step, which needs no progress token, and before it a progress
// notification when the call asked for them (progress).
func allSteps(n int, progress bool) []string {
	var out []string
	for i := 1; i <= n; i++ {
		if progress {
			out = append(out, fmt.Sprintf("p%d", i))
		}
		out = append(out, fmt.Sprintf("l%d", i))
	}
	return out
}

// stepsText says what allSteps(n, progress) is made of, for messages.
func stepsText(progress bool) string {
	if progress {
		return "a progress notification and a log message a step (the call carried a progressToken)"
	}
	return "a log message a step (the call carried no progressToken, so no progress notifications)"
}

// hasProgressToken reports a request whose params._meta has a progressToken.
func (x exchange) hasProgressToken() bool {
	var p struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	json.Unmarshal(x.RPC.Params, &p)
	return len(p.Meta.Token) > 0 && string(p.Meta.Token) != "null"
}

// resultText is the first text content of a CallToolResult.
func resultText(result json.RawMessage) string {
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(result, &r) != nil || len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].Text
}

// structured is the structuredContent of a CallToolResult.
func structured(result json.RawMessage) map[string]json.RawMessage {
	var r struct {
		Structured map[string]json.RawMessage `json:"structuredContent"`
	}
	json.Unmarshal(result, &r)
	return r.Structured
}

// str decodes a JSON string ("" if it is not one).
func str(raw json.RawMessage) string {
	var s string
	json.Unmarshal(raw, &s)
	return s
}

// toolNames lists the tool names of a tools/list result.
func toolNames(result json.RawMessage) []string {
	var r struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	json.Unmarshal(result, &r)
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return out
}

// eventIDs lists the SSE event ids the server sent in an answer.
func eventIDs(x exchange) []string {
	var out []string
	for _, ev := range x.Events {
		if ev.HasID && ev.ID != "" {
			out = append(out, ev.ID)
		}
	}
	return out
}

// isSubsequence reports whether every element of sub is in s, in order.
// byStream groups the steps of notification lines by the stream they say
// they came on (one group when a client does not say).
func byStream(lines []outLine) map[string][]string {
	out := map[string][]string{}
	for _, l := range lines {
		out[l.Stream] = append(out[l.Stream], steps([]outLine{l})...)
	}
	return out
}

func isSubsequence(sub, s []string) bool {
	i := 0
	for _, v := range s {
		if i < len(sub) && v == sub[i] {
			i++
		}
	}
	return i == len(sub)
}

// stored returns the run's stored line (action show).
func (cr *clientRun) stored() outLine {
	cr.e.Helper()
	st := cr.ofType(contract.LineStored)
	if len(st) != 1 {
		cr.e.Failf("run %d (show) printed %d stored lines, want 1", cr.n, len(st))
	}
	return st[0]
}

// countReconnected counts connected lines with the reconnected flag.
func countReconnected(lines []outLine) int {
	n := 0
	for _, l := range lines {
		if l.Type == contract.LineStatus && l.Status == contract.StatusConnected && l.Reconnected {
			n++
		}
	}
	return n
}
