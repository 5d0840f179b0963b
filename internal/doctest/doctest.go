// Package doctest reads interlink's Markdown documentation the way its tests
// need it: the fenced code blocks of a page with their doctest markers, the
// shell command lines in them (continuations joined, here-documents kept),
// those lines split into simple commands as sh would, headings' anchors as
// GitHub makes them, and a shown output matched against a printed one.
// CheckCommand (check.go) parses an interlink command line against the
// real command tree without running it.
//
// Markers: a line "<!-- doctest: WORD -->" right before a fence marks the
// block: "output" (run in-process and compared, no lab), "lab" (run in a
// namespace lab by internal/doctest/labtest), "skip: REASON" (not run,
// its command lines not checked; the reason says why). A lab block can
// say where and how long it runs (labtest reads it): "lab: on NODE" runs
// it in node NODE of the lab that plays the real cluster the page was
// written for, in a /etc of the test's own; "lab: stopped after 2s" (also
// "on NODE, stopped after 2s") stops its last command, which runs until
// stopped (an agent, watch, gate), with SIGINT after 2 s, and it must still
// be running then. Fewer than 10 % of the README's and the guides' command
// blocks may be skipped (docgen's TestGuideBlocksMarked).
package doctest

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// A Block is a fenced code block of a Markdown file.
type Block struct {
	File   string
	Line   int // of the opening fence, 1-based
	Lang   string
	Lines  []string
	Marker string // the doctest marker just before the fence, or ""
	Reason string // what follows "skip:" in the marker
}

var markerRE = regexp.MustCompile(`^<!-- doctest: ([a-z]+)(?::\s*(.*?))? -->$`)

// Blocks returns the fenced code blocks of text, read from file. A line
// "<!-- doctest: WORD -->" before a fence (blank lines between allowed)
// marks the block.
func Blocks(file, text string) []Block {
	var out []Block
	var cur *Block
	marker, reason := "", ""
	for i, l := range strings.Split(text, "\n") {
		if cur != nil {
			if strings.TrimSpace(l) == "```" {
				out = append(out, *cur)
				cur = nil
				continue
			}
			cur.Lines = append(cur.Lines, l)
			continue
		}
		if strings.HasPrefix(l, "```") {
			cur = &Block{File: file, Line: i + 1, Lang: strings.TrimSpace(strings.TrimPrefix(l, "```")), Marker: marker, Reason: reason}
			marker, reason = "", ""
			continue
		}
		if m := markerRE.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			marker, reason = m[1], m[2]
		} else if strings.TrimSpace(l) != "" {
			marker, reason = "", ""
		}
	}
	return out
}

// A CmdLine is one shell command line of a block, continuation lines
// joined, without its prompt.
type CmdLine struct {
	File    string
	Line    int
	Text    string   // the command line (a here-document's body not included)
	Heredoc string   // the here-document's body lines and terminator, "" when none
	Out     []string // what the block shows after it, up to the next prompt (non-sh blocks)
	OutLine int      // the line of Out's first line, 1-based; 0 when Out is empty
}

func (c CmdLine) String() string { return fmt.Sprintf("%s:%d: %s", c.File, c.Line, c.Text) }

// Script is the command line as sh takes it: with its here-document.
func (c CmdLine) Script() string {
	if c.Heredoc == "" {
		return c.Text
	}
	return c.Text + "\n" + c.Heredoc
}

// Runnable says whether b is a block of commands the doctest markers
// concern: a shell script (sh, bash, shell) or a terminal session
// (console).
func (b Block) Runnable() bool { return b.Shell() || b.Lang == "console" }

// Shell says whether b holds a shell script (sh, bash, shell) rather than
// a terminal session with prompts.
func (b Block) Shell() bool { return b.Lang == "sh" || b.Lang == "bash" || b.Lang == "shell" }

// Data reports whether the block is a file's content (YAML, INI, TOML,
// JSON, a nodes file), where "# " starts a comment, not a root prompt.
func (b Block) Data() bool {
	switch b.Lang {
	case "yaml", "yml", "ini", "toml", "json", "conf", "nodes":
		return true
	}
	return false
}

// Commands returns the command lines of b: in sh blocks every line that is
// not a comment; in other blocks the lines after a "$ " or "# " prompt,
// each with the lines shown after it.
func (b Block) Commands() []CmdLine {
	var out []CmdLine
	shell := b.Shell()
	for i := 0; i < len(b.Lines); i++ {
		l := b.Lines[i]
		var text string
		switch {
		case shell:
			if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			text = strings.TrimSpace(l)
		case b.Data():
			continue // a file's content: its "# " lines are comments, not prompts
		case strings.HasPrefix(l, "$ ") || strings.HasPrefix(l, "# "):
			text = strings.TrimSpace(l[2:])
		default:
			if len(out) > 0 {
				c := &out[len(out)-1]
				if len(c.Out) == 0 {
					c.OutLine = b.Line + 1 + i
				}
				c.Out = append(c.Out, l)
			}
			continue
		}
		c := CmdLine{File: b.File, Line: b.Line + 1 + i}
		for strings.HasSuffix(text, `\`) && i+1 < len(b.Lines) {
			i++
			text = strings.TrimSuffix(text, `\`) + " " + strings.TrimSpace(b.Lines[i])
		}
		c.Text = text
		if m := heredocRE.FindStringSubmatch(text); m != nil {
			var body []string
			for i+1 < len(b.Lines) {
				i++
				body = append(body, b.Lines[i])
				if strings.TrimSpace(b.Lines[i]) == m[1] {
					break
				}
			}
			c.Heredoc = strings.Join(body, "\n")
		}
		out = append(out, c)
	}
	return out
}

var heredocRE = regexp.MustCompile(`<<-?\s*['"]?([A-Za-z_]+)['"]?`)

// IsInterlink says whether a program name is interlink as the pages run
// it (interlink, ./bin/interlink, /usr/bin/interlink).
func IsInterlink(prog string) bool {
	return prog == "interlink" || strings.HasSuffix(prog, "/interlink")
}

// Abridged says whether a command's words leave something out ("...").
func Abridged(words []string) bool {
	for _, w := range words {
		if w == "..." || (strings.HasSuffix(w, "...") && !strings.Contains(w, "=")) {
			return true
		}
	}
	return false
}

// Slug is GitHub's anchor for a heading: lower case, punctuation other
// than - and _ dropped, spaces as -.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// Anchors returns the anchors of text's headings (outside code blocks),
// numbered as GitHub numbers repeated ones (x, x-1, x-2).
func Anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimLeft(l, "#")
		if !strings.HasPrefix(h, " ") {
			continue
		}
		s := Slug(h)
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}
