// Package shellqtest checks, for tests, that command lines interlink prints
// for a person keep each name one word: it reads the words of a command out
// of a fix line with a shell parser (mvdan.cc/sh) and runs the command's
// arguments through real shells (bash and sh), printing each word back.
// Only tests import it.
package shellqtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Word is one shell word read from a line: its value after quote removal
// and where its text starts and ends (byte offsets, end exclusive).
type Word struct {
	Value      string
	Start, End int
}

// Words reads the first n words of src with bash's grammar. Each must be
// literal text, plain or quoted: a word with an expansion (command or
// parameter substitution, arithmetic), a glob, a brace or tilde expansion
// is an error, since a shell would not pass it on
// as written. What follows the n words is not read beyond the next token.
func Words(src string, n int) ([]Word, error) {
	p := syntax.NewParser(syntax.Variant(syntax.LangBash))
	var out []Word
	var err error
	for w, perr := range p.WordsSeq(strings.NewReader(src)) {
		if perr != nil {
			err = perr
			break
		}
		v, lerr := literal(w)
		if lerr != nil {
			return out, fmt.Errorf("word %d (%s): %w", len(out)+1, src[w.Pos().Offset():w.End().Offset()], lerr)
		}
		out = append(out, Word{Value: v, Start: int(w.Pos().Offset()), End: int(w.End().Offset())})
		if len(out) == n {
			return out, nil
		}
	}
	if err == nil {
		err = fmt.Errorf("only %d of %d words", len(out), n)
	}
	return out, fmt.Errorf("%q: %w", src, err)
}

func literal(w *syntax.Word) (string, error) {
	for i, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.SglQuoted:
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(x.Value, "~") {
				return "", fmt.Errorf("unquoted %q would be expanded", x.Value)
			}
			for j := 0; j < len(x.Value); j++ {
				switch x.Value[j] {
				case '\\':
					j++ // an escaped character is itself
				case '*', '?', '[', '{':
					return "", fmt.Errorf("unquoted %q would be expanded", x.Value)
				}
			}
		default:
			return "", fmt.Errorf("not literal text: %T", part)
		}
	}
	// Fields does quote removal (Literal keeps the backslash of \'); with
	// no ReadDir it does not glob, and the checks above leave nothing to.
	f, err := expand.Fields(nil, w)
	if err != nil || len(f) != 1 {
		return "", fmt.Errorf("expands to %q (%v), not one field", f, err)
	}
	return f[0], nil
}

// Run runs line with shell -c in dir, with no input and a minimal
// environment, bounded to 10 s, and returns its standard output.
func Run(shell, dir, line string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, shell, "-c", line)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LC_ALL=C"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%w: %s", err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Command checks that text holds, at or after offset from, the command
// whose words are argv, each word one shell word with exactly its value:
// it finds the first word as written (a command name needs no quoting),
// reads len(argv) words from there with Words, and runs them through bash
// and sh with the command name replaced by printf, in a directory holding
// files that a glob would match. It returns the offset where the command
// ends, for the next call; on failure it reports the error and returns -1.
func Command(t testing.TB, text string, from int, argv ...string) int {
	t.Helper()
	i := strings.Index(text[from:], argv[0])
	if i < 0 {
		t.Errorf("no %s after byte %d of %q", argv[0], from, text)
		return -1
	}
	start := from + i
	ws, err := Words(text[start:], len(argv))
	if err != nil {
		t.Errorf("%s: %v", argv[0], err)
		return -1
	}
	for k, w := range ws {
		if w.Value != argv[k] {
			t.Errorf("word %d of %q reads %q, want %q", k+1, text[start:start+ws[len(ws)-1].End], w.Value, argv[k])
			return -1
		}
	}
	end := start + ws[len(ws)-1].End
	args := text[start+ws[0].End : end]
	dir := t.TempDir()
	for _, f := range []string{"a", "b", "eth1", "x y"} {
		os.WriteFile(dir+"/"+f, nil, 0o644)
	}
	for _, sh := range []string{"bash", "sh"} {
		out, err := Run(sh, dir, `printf '%s\0' `+args)
		if err != nil {
			t.Errorf("%s -c printf...%s: %v", sh, args, err)
			return -1
		}
		got := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
		if len(argv) == 1 {
			got = nil // printf with no argument prints one empty word
		}
		if len(got) != len(argv)-1 {
			t.Errorf("%s splits %s into %d words %q, want %d", sh, args, len(got), got, len(argv)-1)
			return -1
		}
		for k, g := range got {
			// sh (dash) keeps $'...' as a '$' and the escaped text: one
			// word still, but not the value; bash must give the value.
			if g != argv[k+1] && (sh == "bash" || !strings.Contains(args, "$'")) {
				t.Errorf("%s reads word %d of %s as %q, want %q", sh, k+2, args, g, argv[k+1])
				return -1
			}
		}
	}
	return end
}
