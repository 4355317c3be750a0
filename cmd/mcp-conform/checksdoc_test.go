package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/checks.md from the catalogue")

// checksDoc is the generated list of checks.
const checksDoc = "../../docs/checks.md"

// TestChecksDoc: docs/checks.md is what `mcp-conform list --markdown`
// prints; -update-docs rewrites it.
func TestChecksDoc(t *testing.T) {
	var out bytes.Buffer
	if err := runList(context.Background(), []string{"--markdown"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if *updateDocs {
		if err := os.WriteFile(checksDoc, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(checksDoc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, out.Bytes()) {
		t.Errorf("docs/checks.md is stale: run go test ./cmd/mcp-conform -run TestChecksDoc -update-docs")
	}
}
