// Package inert renders text a target controls (a server's bodies, a
// client's output) so that it reaches a terminal or a CI step log as
// data, never as instructions: control characters and invalid UTF-8 are
// made visible, the GitHub runner's workflow commands are broken, and a
// quote is bounded.
package inert

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape renders s with every character that could act on a terminal or
// a log reader made visible, and its lines kept: C0 controls but tab and
// newline as \x1b, DEL and C1 controls, the bidirectional overrides and
// other invisible format characters as \u202e, invalid UTF-8 as \xff. It
// breaks the runner's workflow commands (Commands), so that no line it
// returns is one.
func Escape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return breakCommands(b.String())
}

// breakCommands makes sure no line of s is a workflow command of the
// GitHub runner, as its parser reads a line (ActionCommand.TryParse and
// TryParseV2): one whose text after leading white space starts with "::",
// or one that contains "##[" anywhere. The second character of each is
// written as a \u escape, which reads as what it stands for and, inside a
// JSON string, decodes to it.
func breakCommands(s string) string {
	if !strings.Contains(s, "::") && !strings.Contains(s, "##[") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		line = strings.ReplaceAll(line, "##[", `#\u0023[`)
		rest := strings.TrimLeftFunc(line, unicode.IsSpace)
		if strings.HasPrefix(rest, "::") {
			line = line[:len(line)-len(rest)] + `:\u003a` + rest[2:]
		}
		lines[i] = line
	}
	return strings.Join(lines, "\n")
}

// Bound returns s whole if it is at most max bytes; otherwise its
// beginning and end, cut at rune boundaries, around a note of what was
// left out: the full length and the start of its SHA-256, so that two
// quotes of the same text can be matched.
func Bound(s string, max int) string {
	if len(s) <= max {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	// The count left out has at most as many digits as the length.
	note := fmt.Sprintf(" …[%d bytes left out of %d, sha256 %s]… ", len(s), len(s), hex.EncodeToString(sum[:6]))
	keep := max - len(note)
	if keep < 0 {
		keep = 0
	}
	head, tail := runeCut(s, keep*3/4, true), runeCut(s, keep-keep*3/4, false)
	note = fmt.Sprintf(" …[%d bytes left out of %d, sha256 %s]… ", len(s)-len(head)-len(tail), len(s), hex.EncodeToString(sum[:6]))
	return head + note + tail
}

// runeCut returns at most n bytes of s's beginning (or end), not cutting
// a rune in two.
func runeCut(s string, n int, beginning bool) string {
	if beginning {
		for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
			n--
		}
		return s[:n]
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
