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
// namespace lab by internal/doctest/labtest), "skip" (not checked).
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
}

var markerRE = regexp.MustCompile(`^<!-- doctest: ([a-z]+) -->$`)

// Blocks returns the fenced code blocks of text, read from file. A line
// "<!-- doctest: WORD -->" before a fence (blank lines between allowed)
// marks the block.
func Blocks(file, text string) []Block {
	var out []Block
	var cur *Block
	marker := ""
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
			cur = &Block{File: file, Line: i + 1, Lang: strings.TrimSpace(strings.TrimPrefix(l, "```")), Marker: marker}
			marker = ""
			continue
		}
		if m := markerRE.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			marker = m[1]
		} else if strings.TrimSpace(l) != "" {
			marker = ""
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
}

func (c CmdLine) String() string { return fmt.Sprintf("%s:%d: %s", c.File, c.Line, c.Text) }

// Script is the command line as sh takes it: with its here-document.
func (c CmdLine) Script() string {
	if c.Heredoc == "" {
		return c.Text
	}
	return c.Text + "\n" + c.Heredoc
}

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
				out[len(out)-1].Out = append(out[len(out)-1].Out, l)
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

// A token of a shell command line: a word, or an operator (Op set).
type token struct {
	text string
	op   bool
}

// lex splits a shell command line into words and operators as sh would
// for the purpose here: quotes removed, $VAR and $(...) kept as written
// (a placeholder argument), comments dropped.
func lex(s string) ([]token, error) {
	var toks []token
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			toks = append(toks, token{text: w.String()})
			w.Reset()
			inWord = false
		}
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			flush()
		case r == '#' && !inWord:
			return toks, nil
		case r == '\\' && i+1 < len(rs):
			i++
			w.WriteRune(rs[i])
			inWord = true
		case r == '\'':
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j == len(rs) {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			w.WriteString(string(rs[i+1 : j]))
			inWord = true
			i = j
		case r == '"':
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[j+1]) {
					j++
				}
				w.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
			inWord = true
			i = j
		case r == '$' && i+1 < len(rs) && rs[i+1] == '(':
			depth := 0
			j := i + 1
			for ; j < len(rs); j++ {
				if rs[j] == '(' {
					depth++
				} else if rs[j] == ')' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			w.WriteString(string(rs[i:min(j+1, len(rs))]))
			inWord = true
			i = j
		case strings.ContainsRune("|&;()<>", r):
			// 2>&1, 2>/dev/null: a digit right before a redirection is its
			// descriptor, not a word.
			if (r == '>' || r == '<') && inWord && w.Len() == 1 && w.String() >= "0" && w.String() <= "9" {
				w.Reset()
				inWord = false
			}
			flush()
			op := string(r)
			if i+1 < len(rs) && (rs[i+1] == r || (r == '>' && rs[i+1] == '&')) {
				op += string(rs[i+1])
				i++
			}
			toks = append(toks, token{text: op, op: true})
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	flush()
	return toks, nil
}

// SimpleCommands splits a command line into its simple commands' words
// (at |, ||, &&, ;, &, parentheses), without redirections, leading
// VAR=value assignments, sudo and time.
func SimpleCommands(s string) ([][]string, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	var out [][]string
	var cur []string
	end := func() {
		if len(cur) > 0 {
			out = append(out, cur)
		}
		cur = nil
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !t.op {
			if len(cur) == 0 && (assignRE.MatchString(t.text) || t.text == "sudo" || t.text == "time") {
				continue
			}
			cur = append(cur, t.text)
			continue
		}
		switch t.text {
		case ">", ">>", "<", "<<", ">&":
			i++ // the file (or descriptor) redirected to
		default:
			end()
		}
	}
	end()
	return out, nil
}

var assignRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

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

// timeRE matches the times a run prints (RFC 3339 UTC).
var timeRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)

func normalizeLine(s string) string {
	return strings.TrimRight(timeRE.ReplaceAllString(s, "TIME"), " \t")
}

// numberRE matches a measurement as interlink prints it: a number with the
// unit it chose for its size (9000, 0.088 ms, 736ms, 1m0s, 1.72 KiB,
// 20.53 Gbit/s); runs of them (1m0s) are one.
var numberRE = regexp.MustCompile(`([0-9]+(\.[0-9]+)? ?(ns|us|µs|ms|s|m|h|B|KiB|MiB|GiB|TiB|bit/s|Kbit/s|Mbit/s|Gbit/s)?\b)+`)

// shapeLine reduces a line to its shape: every measurement N, runs of
// blanks one blank (columns widen with their numbers).
func shapeLine(s string) string {
	return strings.Join(strings.Fields(numberRE.ReplaceAllString(s, "N")), " ")
}

// MatchOutput matches the lines a page shows against what a command
// printed: line by line, times not compared, trailing blanks ignored; a
// shown line starting with "..." (after indentation) stands for any run of
// printed lines, none included.
func MatchOutput(shown []string, printed string) error {
	return match(shown, printed, normalizeLine)
}

// MatchShape is MatchOutput for measurements, which differ from run to run:
// every number matches any number, and blanks are not counted. What is
// left (verdict words, units, the '!' of a matrix cell, which lines there
// are) must match.
func MatchShape(shown []string, printed string) error {
	return match(shown, printed, shapeLine)
}

func match(shown []string, printed string, norm func(string) string) error {
	got := strings.Split(strings.TrimRight(printed, "\n"), "\n")
	for len(shown) > 0 && strings.TrimSpace(shown[len(shown)-1]) == "" {
		shown = shown[:len(shown)-1]
	}
	memo := map[[2]int]bool{} // shown[i:] matches got[j:]
	seen := map[[2]int]bool{}
	best := 0 // the furthest shown line reached, for the message
	var match func(i, j int) bool
	match = func(i, j int) bool {
		k := [2]int{i, j}
		if seen[k] {
			return memo[k]
		}
		seen[k] = true
		best = max(best, i)
		var ok bool
		switch {
		case i == len(shown):
			ok = j == len(got)
		case strings.HasPrefix(strings.TrimSpace(shown[i]), "..."):
			ok = match(i+1, j) || (j < len(got) && match(i, j+1))
		default:
			ok = j < len(got) && norm(shown[i]) == norm(got[j]) && match(i+1, j+1)
		}
		memo[k] = ok
		return ok
	}
	if match(0, 0) {
		return nil
	}
	if best < len(shown) {
		return fmt.Errorf("no printed line matches the page's line %d: %q", best+1, shown[best])
	}
	return fmt.Errorf("the command printed more lines than the page shows")
}
