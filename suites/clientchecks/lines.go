package clientchecks

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-conform/mcp-conform/contract"
)

func isNotification(l outLine) bool { return l.Type == contract.LineNotification }

// isLog reports a notifications/message line.
func isLog(l outLine) bool { return isNotification(l) && l.Method == "notifications/message" }

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
		if s := stepOf(l.Method, l.Params); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// stepOf renders one notification of long_operation as p<N> (progress) or
// l<N> (log), "" for any other method.
func stepOf(method string, params json.RawMessage) string {
	switch method {
	case "notifications/progress":
		var p struct {
			Progress float64 `json:"progress"`
		}
		json.Unmarshal(params, &p)
		return fmt.Sprintf("p%d", int(p.Progress))
	case "notifications/message":
		var i, n int
		fmt.Sscanf(logData(params), "step %d of %d", &i, &n)
		return fmt.Sprintf("l%d", i)
	}
	return ""
}

// dataStep is stepOf for the data of an SSE event the server sent: the
// step of the notification it carries, or "".
func dataStep(data string) string {
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Params json.RawMessage `json:"params"`
	}
	if strings.TrimSpace(data) == "" || json.Unmarshal([]byte(data), &m) != nil || len(m.ID) > 0 {
		return ""
	}
	return stepOf(m.Method, m.Params)
}

// sentSteps renders the notifications of long_operation that the server
// sent in an answer, in order, from its own record: what the server wrote,
// whatever the client printed.
func sentSteps(x exchange) []string {
	var out []string
	for _, ev := range x.Events {
		if s := dataStep(ev.Data); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// logsOnly keeps the log steps (l<N>) of rendered steps.
func logsOnly(steps []string) []string {
	var out []string
	for _, s := range steps {
		if strings.HasPrefix(s, "l") {
			out = append(out, s)
		}
	}
	return out
}

// stepName says what a rendered step is, for messages.
func stepName(step string) string {
	if n, ok := strings.CutPrefix(step, "p"); ok {
		return "the progress notification of step " + n + " (" + step + ")"
	}
	return "the log message of step " + strings.TrimPrefix(step, "l") + " (" + step + ")"
}

// stepsList renders steps for a message: "none" when there are none.
func stepsList(steps []string) string {
	if len(steps) == 0 {
		return "none"
	}
	return strings.Join(steps, " ")
}

// sameSteps reports whether got holds exactly the steps of want, each as
// many times, in any order.
func sameSteps(got, want []string) bool {
	a, b := slices.Clone(got), slices.Clone(want)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
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
