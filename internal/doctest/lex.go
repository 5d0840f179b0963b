package doctest

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

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
		case r == '\'' || r == '"':
			text, j, ok := quoted(rs, i)
			if !ok {
				return nil, fmt.Errorf("unterminated %c in %q", r, s)
			}
			w.WriteString(text)
			inWord = true
			i = j
		case r == '$' && i+1 < len(rs) && rs[i+1] == '(':
			j := substitution(rs, i)
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

// quoted reads the quoted string that starts at rs[i] (' or "): its text
// as sh takes it (in "...", \ escapes only " \ $ and `), the index of the
// closing quote, and false when there is none.
func quoted(rs []rune, i int) (string, int, bool) {
	q := rs[i]
	var w strings.Builder
	j := i + 1
	for ; j < len(rs) && rs[j] != q; j++ {
		if q == '"' && rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[j+1]) {
			j++
		}
		w.WriteRune(rs[j])
	}
	return w.String(), j, j < len(rs)
}

// substitution returns the index of the ) that closes the $( at rs[i],
// or len(rs) when none does.
func substitution(rs []rune, i int) int {
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
	return j
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
