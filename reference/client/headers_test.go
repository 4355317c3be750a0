package client

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestParamHeaders: annotated parameters are mirrored into Mcp-Param
// headers, primitives in their header form, unsafe strings in Base64;
// absent, null and non-primitive values and unannotated parameters are not.
func TestParamHeaders(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"region":    map[string]any{"type": "string", "x-mcp-header": "Region"},
		"priority":  map[string]any{"type": "integer", "x-mcp-header": "Priority"},
		"verbose":   map[string]any{"type": "boolean", "x-mcp-header": "Verbose"},
		"empty":     map[string]any{"type": "string", "x-mcp-header": "Empty"},
		"world":     map[string]any{"type": "string", "x-mcp-header": "World"},
		"padded":    map[string]any{"type": "string", "x-mcp-header": "Padded"},
		"lookalike": map[string]any{"type": "string", "x-mcp-header": "Lookalike"},
		"crlf":      map[string]any{"type": "string", "x-mcp-header": "CrLf"},
		"gone":      map[string]any{"type": "string", "x-mcp-header": "Gone"},
		"nil":       map[string]any{"type": "string", "x-mcp-header": "Nil"},
		"float":     map[string]any{"type": "integer", "x-mcp-header": "Float"},
		"query":     map[string]any{"type": "string"},
		"nested":    map[string]any{"type": "object", "properties": map[string]any{"zone": map[string]any{"type": "string", "x-mcp-header": "Zone"}}},
	}}
	b, err := headerBindings(schema)
	if err != nil {
		t.Fatal(err)
	}
	args := `{"region":"us-west1","priority":42,"verbose":false,"empty":"","world":"Hello, 世界","padded":" x ","lookalike":"=?base64?abc?=",
		"crlf":"a\r\nb","nil":null,"float":3.5,"query":"q","nested":{"zone":"z1"}}`
	h := paramHeaders(b, json.RawMessage(args))
	want := map[string]string{
		"Mcp-Param-Region": "us-west1", "Mcp-Param-Priority": "42", "Mcp-Param-Verbose": "false", "Mcp-Param-Empty": "",
		"Mcp-Param-World": "=?base64?SGVsbG8sIOS4lueVjA==?=", "Mcp-Param-Padded": "=?base64?IHgg?=",
		"Mcp-Param-Lookalike": "=?base64?PT9iYXNlNjQ/YWJjPz0=?=", "Mcp-Param-CrLf": "=?base64?YQ0KYg==?=", "Mcp-Param-Zone": "z1",
	}
	for k, v := range want {
		if got, ok := h[k]; !ok || len(got) != 1 || got[0] != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if len(h) != len(want) {
		t.Errorf("headers %v, want exactly %v", h, want)
	}
}

// TestHeaderBindingsRejects: every malformed annotation excludes its tool,
// with an error naming the parameter.
func TestHeaderBindingsRejects(t *testing.T) {
	prop := func(typ string, name any) map[string]any {
		return map[string]any{"type": typ, "x-mcp-header": name}
	}
	for _, tc := range []struct {
		props map[string]any
		want  string
	}{
		{map[string]any{"v": prop("string", "")}, "non-empty string"},
		{map[string]any{"v": prop("string", 7)}, "non-empty string"},
		{map[string]any{"v": prop("object", "Data")}, "string, integer and boolean parameters only"},
		{map[string]any{"v": prop("number", "Score")}, "string, integer and boolean parameters only"},
		{map[string]any{"v": prop("null", "Nil")}, "string, integer and boolean parameters only"},
		{map[string]any{"a": prop("string", "Region"), "b": prop("string", "Region")}, "used twice"},
		{map[string]any{"a": prop("string", "MyField"), "b": prop("string", "myfield")}, "used twice"},
		{map[string]any{"v": prop("string", "My Region")}, "not an HTTP header name"},
		{map[string]any{"v": prop("string", "Region:Primary")}, "not an HTTP header name"},
		{map[string]any{"v": prop("string", "Région")}, "not an HTTP header name"},
		{map[string]any{"v": prop("string", "Region\t1")}, "not an HTTP header name"},
		{map[string]any{"o": map[string]any{"type": "object", "properties": map[string]any{"v": prop("array", "Items")}}}, "parameter o.v"},
	} {
		_, err := headerBindings(map[string]any{"type": "object", "properties": tc.props})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.props, err, tc.want)
		}
	}
}
