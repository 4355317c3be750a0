// Package browserclient is the reference browser client: the seeds'
// BrowserMcpClient, which is the reference client (reference/client)
// compiled to WebAssembly (wasm/) with its state in the page's
// localStorage, in a page (index.html) that follows the page contract of
// `mcp-conform client --browser`. Build puts the page, the program and
// Go's wasm_exec.js in a directory; Serve serves one.
package browserclient

import (
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

//go:embed index.html
var indexHTML []byte

// EnvDir names a directory Build made, to use instead of building.
const EnvDir = "MCP_CONFORM_PAGE_DIR"

// Program is the reference browser client's import path.
const Program = "github.com/mcp-conform/mcp-conform/reference/browserclient/wasm"

// Find returns the directory of a built reference browser client:
// $MCP_CONFORM_PAGE_DIR, else page/ beside the running executable (where
// `make build` puts it), else one Build makes in tmp when the working
// directory is in this project's source.
func Find(tmp string) (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return d, complete(d)
	}
	if exe, err := os.Executable(); err == nil {
		if d := filepath.Join(filepath.Dir(exe), "page"); complete(d) == nil {
			return d, nil
		}
	}
	d := filepath.Join(tmp, "page")
	if err := Build(d, Program); err != nil {
		return "", fmt.Errorf("the reference browser client is not built (make build puts it in bin/page, or set $%s) and building it failed: %w", EnvDir, err)
	}
	return d, nil
}

// complete reports a directory that lacks one of the page's files.
func complete(dir string) error {
	for _, f := range []string{"index.html", "client.wasm", "wasm_exec.js"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return err
		}
	}
	return nil
}

// Build compiles program pkg (GOOS=js GOARCH=wasm; Program, or a broken
// variant) into dir, with the page and the wasm_exec.js of the Go that
// compiled it, which must match. It needs the go command and this
// project's source around the working directory.
func Build(dir, pkg string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// -s -w: no symbol table and no DWARF, a quarter less for every
	// page load to fetch and compile.
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, "client.wasm"), pkg)
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v: %s", pkg, err, strings.TrimSpace(string(out)))
	}
	root, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return fmt.Errorf("go env GOROOT: %w", err)
	}
	var js []byte
	for _, p := range []string{"lib/wasm/wasm_exec.js", "misc/wasm/wasm_exec.js"} {
		if js, err = os.ReadFile(filepath.Join(strings.TrimSpace(string(root)), p)); err == nil {
			break
		}
	}
	if js == nil {
		return errors.New("wasm_exec.js not found in GOROOT")
	}
	if err := os.WriteFile(filepath.Join(dir, "wasm_exec.js"), js, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "index.html"), indexHTML, 0o644)
}

// Serve serves dir on a loopback port and returns the page's URL and a
// function that stops the server.
func Serve(dir string) (string, func(), error) {
	if err := complete(dir); err != nil {
		return "", nil, fmt.Errorf("the reference browser client in %s: %w", dir, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir))}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/index.html", func() { srv.Close() }, nil
}
