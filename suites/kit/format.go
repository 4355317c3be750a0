package kit

import (
	"regexp"

	"github.com/onsi/gomega/format"
)

// A failed assertion on an error shows its message, not the Go value
// behind it (a pointer, the struct's fields, the types that wrap it):
// what a reader of a verdict needs is what went wrong on the wire.
// Gomega prints an error as its type and address, its message, and its
// value: the value is left empty here, and plain removes the first.
func init() {
	format.RegisterCustomFormatter(func(v any) (string, bool) {
		if _, ok := v.(error); ok {
			return "", true
		}
		return "", false
	})
}

// goValueHeader is the line Gomega starts an object with: "<*pkg.T | 0x…>: ".
var goValueHeader = regexp.MustCompile(`(?m)^[ \t]*<[^<>\n]*\| 0x[0-9a-f]+>: ?\n`)

// plain removes Gomega's Go value headers from a failure message.
func plain(message string) string { return goValueHeader.ReplaceAllString(message, "") }
