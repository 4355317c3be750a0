package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestToolParamsArgumentsObject: tools/call always carries an object as
// its arguments. A nil map held in an interface is not == nil, and used to
// go out as "arguments":null, which schema-validating servers refuse.
func TestToolParamsArgumentsObject(t *testing.T) {
	for _, tc := range []struct {
		name string
		args any
		want string
	}{
		{"nil map", map[string]any(nil), `"arguments":{}`},
		{"nil interface", nil, `"arguments":{}`},
		{"nil raw JSON", json.RawMessage(nil), `"arguments":{}`},
		{"raw JSON null", json.RawMessage("null"), `"arguments":{}`},
		{"nil pointer", (*struct{ N int })(nil), `"arguments":{}`},
		{"empty map", map[string]any{}, `"arguments":{}`},
		{"non-empty map", map[string]any{"steps": 2}, `"arguments":{"steps":2}`},
		{"raw JSON object", json.RawMessage(`{"a":"b"}`), `"arguments":{"a":"b"}`},
	} {
		data, err := json.Marshal(ToolParams("counter_increment", tc.args, ""))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !strings.Contains(string(data), tc.want) {
			t.Errorf("%s: params %s, want %s", tc.name, data, tc.want)
		}
	}
}
