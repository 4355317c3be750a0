package kit

import (
	"encoding/json"
	"strings"
	"sync"
)

// groups names the JSON-RPC request a message belongs to, so that a
// request, its notifications (by progress token) and its response (by id)
// share one group on the timeline.
type groups struct {
	mu sync.Mutex
	// byToken maps a request's progress token to its group.
	byToken map[string]string
}

type rpcFields struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Token json.RawMessage `json:"progressToken"`
		Meta  struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	} `json:"params"`
}

// of returns the group of a JSON-RPC message (a request body or an SSE
// data field), or "" for one that belongs to no request.
func (g *groups) of(msg string) string {
	msg = strings.TrimSpace(msg)
	if !strings.HasPrefix(msg, "{") {
		return ""
	}
	var m rpcFields
	if json.Unmarshal([]byte(msg), &m) != nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.byToken == nil {
		g.byToken = map[string]string{}
	}
	id := ""
	if len(m.ID) > 0 && string(m.ID) != "null" {
		id = "id " + Clip(string(m.ID), 40)
	}
	if tok := Clip(string(m.Params.Meta.Token), 40); tok != "" && id != "" && m.Method != "" {
		g.byToken[tok] = id // a request with a progress token
	}
	if tok := Clip(string(m.Params.Token), 40); tok != "" && m.Method != "" && id == "" {
		if grp, ok := g.byToken[tok]; ok {
			return grp
		}
		return "token " + tok
	}
	return id
}
