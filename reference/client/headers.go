package client

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// SEP-2243 (2026-07-28): a tool's input schema may mark a parameter with
// "x-mcp-header": NAME, and the client then mirrors the argument into an
// Mcp-Param-NAME header of the tools/call, so that routers need not read
// the body. A tool whose annotations are malformed must be excluded.

const paramHeaderPrefix = "Mcp-Param-"

// paramBinding is one annotated parameter: its path in the arguments
// (nested properties included) and its header name.
type paramBinding struct {
	path   []string
	header string
}

// schemaNode is what the annotations need of an input schema.
type schemaNode struct {
	Type       json.RawMessage       `json:"type"`
	Header     json.RawMessage       `json:"x-mcp-header"`
	Properties map[string]schemaNode `json:"properties"`
}

// headerBindings returns a tool's annotated parameters, or an error naming
// the first malformed annotation: an empty or non-string name, a name that
// is not an HTTP token of ASCII characters, a name used twice (in any
// case), or an annotation on a type other than string, integer or boolean.
func headerBindings(inputSchema any) ([]paramBinding, error) {
	data, err := json.Marshal(inputSchema)
	if err != nil {
		return nil, err
	}
	var root schemaNode
	if json.Unmarshal(data, &root) != nil {
		return nil, nil // not an object schema: nothing annotated
	}
	var out []paramBinding
	seen := map[string]string{}
	if err := collectBindings(root.Properties, nil, seen, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func collectBindings(props map[string]schemaNode, prefix []string, seen map[string]string, out *[]paramBinding) error {
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names) // a stable first error
	for _, n := range names {
		p := props[n]
		path := append(append([]string(nil), prefix...), n)
		where := strings.Join(path, ".")
		if p.Header != nil {
			var name string
			if json.Unmarshal(p.Header, &name) != nil || name == "" {
				return fmt.Errorf("parameter %s: x-mcp-header must be a non-empty string, got %s", where, p.Header)
			}
			if !isToken(name) {
				return fmt.Errorf("parameter %s: x-mcp-header %q is not an HTTP header name (ASCII letters, digits and !#$%%&'*+-.^_`|~ only)", where, name)
			}
			var typ string
			json.Unmarshal(p.Type, &typ)
			if typ != "string" && typ != "integer" && typ != "boolean" {
				return fmt.Errorf("parameter %s: x-mcp-header %q is allowed on string, integer and boolean parameters only, not %s", where, name, p.Type)
			}
			if other, dup := seen[strings.ToLower(name)]; dup {
				return fmt.Errorf("parameters %s and %s: x-mcp-header %q used twice (names are case-insensitive)", other, where, name)
			}
			seen[strings.ToLower(name)] = where
			*out = append(*out, paramBinding{path: path, header: name})
		}
		if err := collectBindings(p.Properties, path, seen, out); err != nil {
			return err
		}
	}
	return nil
}

// isToken reports whether s is an HTTP token (RFC 9110 tchar).
func isToken(s string) bool {
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case strings.ContainsRune("!#$%&'*+-.^_`|~", r):
		default:
			return false
		}
	}
	return s != ""
}

// paramHeaders returns the Mcp-Param headers of a call's arguments. An
// absent or null argument gets no header; a value that is not a string, a
// boolean or a safe integer gets none either (the server validates).
func paramHeaders(bindings []paramBinding, args json.RawMessage) http.Header {
	if len(bindings) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil {
		return nil
	}
	h := http.Header{}
	for _, b := range bindings {
		raw, ok := lookup(obj, b.path)
		if !ok {
			continue
		}
		if v, ok := headerValue(raw); ok {
			h[paramHeaderPrefix+b.header] = []string{v}
		}
	}
	return h
}

func lookup(obj map[string]json.RawMessage, path []string) (json.RawMessage, bool) {
	raw, ok := obj[path[0]]
	for _, p := range path[1:] {
		var inner map[string]json.RawMessage
		if !ok || json.Unmarshal(raw, &inner) != nil {
			return nil, false
		}
		raw, ok = inner[p]
	}
	return raw, ok && string(raw) != "null"
}

// headerValue is a primitive's header form: booleans as true/false,
// integers in decimal, strings as they are unless they need Base64
// (=?base64?...?=): leading or trailing space or tab, characters outside
// visible ASCII, or the look of an encoded value.
func headerValue(raw json.RawMessage) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	var s string
	switch x := v.(type) {
	case bool:
		s = strconv.FormatBool(x)
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53-1 {
			return "", false
		}
		s = strconv.FormatInt(int64(x), 10)
	case string:
		s = x
	default:
		return "", false
	}
	if needsBase64(s) {
		return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=", true
	}
	return s, true
}

func needsBase64(s string) bool {
	if s == "" {
		return false
	}
	if strings.ContainsRune(" \t", rune(s[0])) || strings.ContainsRune(" \t", rune(s[len(s)-1])) {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return true
		}
	}
	return strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?=")
}
