// Package termtext makes text that came from outside (a captured tree, a
// bundle, a peer, a topology file) safe to print on an engineer's terminal.
//
// Such text can carry terminal escape sequences (retitle the window, clear
// the screen, move the cursor), bidirectional overrides that make a line
// read differently from what it holds, or invalid UTF-8. Clean shows every
// such character escaped, Go-style, so the reader sees what the source held
// and the terminal interprets none of it.
package termtext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clean returns s with every control character (C0, DEL, C1, including
// newline and tab), Unicode format character (bidi overrides, zero-width
// joiners) and invalid UTF-8 byte replaced by a visible escape: \n, \t, \r,
// \e for ESC, \xNN for other bytes below 0x80 and invalid bytes, \uNNNN for
// the rest. A backslash is left as it is. Text that needs no change is
// returned unchanged without copying.
func Clean(s string) string {
	if IsClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == 0x1b:
			b.WriteString(`\e`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Lines is Clean for multi-line text: newlines stay, every line is cleaned.
func Lines(s string) string {
	if IsClean(strings.ReplaceAll(s, "\n", "")) {
		return s
	}
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		parts[i] = Clean(p)
	}
	return strings.Join(parts, "\n")
}

// IsClean reports whether Clean would return s unchanged: s is valid UTF-8
// and holds no control character (newline included), C1 control or
// Unicode format character.
func IsClean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			goto slow
		}
	}
	return true
slow:
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || r < 0x20 || r == 0x7f || unsafe(r) {
			return false
		}
		i += size
	}
	return true
}

// unsafe reports runes a terminal may act on or that change how a line
// reads: C1 controls and Unicode format characters (category Cf: bidi
// embeddings, overrides and isolates, zero-width characters).
func unsafe(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029
}

// Short quotes s as %q does, cut after max runes with "..." and the
// length in bytes: an error line that quotes a line of a file of another
// kind (a binary file, a 5000-character line) stays short.
func Short(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	r := []rune(s)
	return fmt.Sprintf("%q... (%d bytes)", string(r[:max]), len(s))
}
