package kit

import (
	"regexp"
	"strings"

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

// goTypeHeader is the type Gomega puts before a value on its line:
// "<int>: 3", "<*pkg.T | 0x0>: nil".
var goTypeHeader = regexp.MustCompile(`(?m)^([ \t]*)<[^<>\n]*>: ?`)

// trivialTail is what Gomega adds after a check's own description of a
// failed BeNil, BeTrue or BeFalse: it says nothing the description does
// not ("Expected nil not to be nil").
var trivialTail = regexp.MustCompile(`\nExpected\n[ \t]*(?:nil\nnot to be nil|false\nto be true|true\nto be false)$`)

// plain removes Gomega's Go value and type headers from a failure message,
// and the tail of a failed BeNil, BeTrue or BeFalse after the check's own
// description.
func plain(message string) string {
	m := goTypeHeader.ReplaceAllString(goValueHeader.ReplaceAllString(message, ""), "$1")
	if !strings.HasPrefix(m, "Expected") {
		m = trivialTail.ReplaceAllString(m, "")
	}
	return m
}
