// Package shellq quotes words for a POSIX shell, for the command lines
// interlink prints for a person to run: fix lines, hints in errors, the
// commands a demo leaves to try. The names in them (interfaces, mount
// points, paths, hostnames) come from bundles, inventories and topologies,
// and a Linux interface may well be called $(id): pasted unquoted, the line
// would run it.
//
// Quote keeps a plain word as it is, so a line about eth1 or /u02/oradata
// reads as before, and quotes anything else so that the shell sees exactly
// one word holding exactly the name. What it prints is also text a terminal
// shows as it is (termtext.IsClean): a name holding control characters or
// invalid UTF-8 is written with $'...' escapes, never raw.
package shellq

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/interlink/interlink/internal/termtext"
)

// Quote returns s as one shell word whose value is s:
//
//   - s itself when it is non-empty and every byte is a letter, a digit or
//     one of _@%+=:,./- (nothing there is special to a shell in argument
//     position; a leading '-' stays, since it is the command that reads it
//     as an option, not the shell);
//   - s in single quotes when s is printable text, each single quote in it
//     closed, escaped and reopened (POSIX: exact in every shell of the
//     family); the empty string is a pair of single quotes;
//   - s in $'...' with backslash escapes (\n, \t, \r, \ooo octal bytes)
//     when s holds a control character, invalid UTF-8 or a Unicode format
//     character (bidi overrides, zero-width characters). bash, ksh, zsh,
//     busybox sh and POSIX.1-2024 shells give back s exactly; older shells
//     without $'...' (dash before 0.5.13) still see one word with nothing
//     expanded: a '$' and the escaped text. A NUL byte ends the word in
//     bash; no argument of a real command can hold one anyway.
//
// For example:
//
//	eth1               eth1
//	/u02/oradata       /u02/oradata
//	$(id)              '$(id)'
//	it's               'it'\''s'
//	a, newline, b      $'a\nb'
//
// Quote is for arguments: a command word of the form NAME=... would be
// taken for an assignment (Join quotes that one).
func Quote(s string) string {
	switch {
	case s == "":
		return "''"
	case plain(s):
		return s
	case termtext.IsClean(s):
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return dollar(s)
}

// Join quotes each argument with Quote and joins them with spaces: one
// command line whose words are args. A first word that a shell would take
// for an assignment (NAME=...) is quoted, so it stays the command.
func Join(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = Quote(a)
		if i == 0 && q[0] == a && assignment(a) {
			q[0] = "'" + a + "'"
		}
	}
	return strings.Join(q, " ")
}

// assignment reports whether a plain word starts with a shell variable
// name and '='.
func assignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" || '0' <= name[0] && name[0] <= '9' {
		return false
	}
	return strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == ""
}

func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_@%+=:,./-", c) >= 0) {
			return false
		}
	}
	return s != ""
}

// dollar writes s as $'...'. '!' is escaped too, so that no bash, however
// old, applies history expansion to a pasted line.
func dollar(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString("$'")
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		r := s[i : i+size]
		switch r {
		case `\`, `'`:
			b.WriteString(`\` + r)
		case "\n":
			b.WriteString(`\n`)
		case "\t":
			b.WriteString(`\t`)
		case "\r":
			b.WriteString(`\r`)
		case "!":
			b.WriteString(`\041`)
		default:
			if termtext.IsClean(r) {
				b.WriteString(r)
				break
			}
			for j := 0; j < len(r); j++ {
				// Three octal digits always: a digit that follows is never
				// read as part of the escape.
				fmt.Fprintf(&b, `\%03o`, r[j])
			}
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}
