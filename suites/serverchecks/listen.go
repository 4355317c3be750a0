package serverchecks

import (
	"fmt"
)

// listenChecks are the checks of subscriptions/listen (2026-07-28), the
// long-lived stream of change notifications.
func listenChecks() []def {
	return []def{}
}

// unasked are the notifications of the listen method on l: for a stream
// whose key nothing triggered, notifications it did not ask for.
func (e *env) unasked(l *listenStream) []string {
	var out []string
	for _, m := range e.notifications(l) {
		out = append(out, fmt.Sprintf("%s %s", m.Method, m.Params))
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "with nothing"
	}
	return s
}
