package harness

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/target"
)

// TestProfileFile: fixtures/profile.yaml (also shown in README) declares
// exactly what ReferenceProfile does, so neither drifts from the server's timings.
func TestProfileFile(t *testing.T) {
	data, err := os.ReadFile("../fixtures/profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file, err := target.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	// Arguments decode as float64 from YAML; compare through the same parser.
	js, err := json.Marshal(ReferenceProfile())
	if err != nil {
		t.Fatal(err)
	}
	want, err := target.Parse(js)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(file, want) {
		t.Errorf("fixtures/profile.yaml:\n%+v\nReferenceProfile():\n%+v", file, want)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), strings.TrimSpace(string(data))) {
		t.Error("README does not show fixtures/profile.yaml as it is")
	}
	if err := ReferenceProfile().Validate(); err != nil {
		t.Error(err)
	}
}
