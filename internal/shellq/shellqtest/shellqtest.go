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
	"sync"
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

// Check checks that text holds, after the first occurrence of anchor at or
// after byte from, the words want, each one shell word with exactly its
// value. It reads len(want) words there with Words, then runs them through
// bash and sh as printf's arguments, in a directory holding files that a
// glob would match, and compares the words printed. A comma that ends the
// last word is the prose's ("set MTU 9000 on eth1, its slaves"), not the
// word's. It returns the offset where the words end, for the next call;
// on failure it reports the error and returns -1.
//
// A command is checked with its command name in anchor and its arguments
// in want: Check(t, fix, 0, "ip link set dev ", name, "mtu", "9000").
func Check(t testing.TB, text string, from int, anchor string, want ...string) int {
	t.Helper()
	i := strings.Index(text[from:], anchor)
	if i < 0 {
		t.Errorf("no %q after byte %d of %q", anchor, from, text)
		return -1
	}
	start := from + i + len(anchor)
	ws, err := Words(text[start:], len(want))
	if err != nil {
		t.Errorf("after %q: %v", anchor, err)
		return -1
	}
	last := &ws[len(ws)-1]
	if text[start+last.End-1] == ',' && strings.HasSuffix(last.Value, ",") && !strings.HasSuffix(want[len(want)-1], ",") {
		last.Value, last.End = strings.TrimSuffix(last.Value, ","), last.End-1
	}
	end := start + last.End
	span := text[start+ws[0].Start : end]
	for k, w := range ws {
		if w.Value != want[k] {
			t.Errorf("after %q, word %d of %s reads %q, want %q", anchor, k+1, span, w.Value, want[k])
			return -1
		}
	}
	for _, sh := range []string{"bash", "sh"} {
		out, err := printWords(t, sh, span)
		if err != nil {
			t.Errorf("%s -c printf...%s: %v", sh, span, err)
			return -1
		}
		got := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
		if len(got) != len(want) {
			t.Errorf("%s splits %s into %d words %q, want %d", sh, span, len(got), got, len(want))
			return -1
		}
		for k, g := range got {
			// sh (dash) keeps $'...' as a '$' and the escaped text: one
			// word still, but not the value; bash must give the value.
			if g != want[k] && (sh == "bash" || !strings.Contains(span, "$'")) {
				t.Errorf("%s reads word %d of %s as %q, want %q", sh, k+1, span, g, want[k])
				return -1
			}
		}
	}
	return end
}

// printed holds what printWords's shells printed, by shell and words: the
// same fix words come back for many names and rules (half of the rules
// package's calls), and a shell prints the same words the same way in a
// directory of the same files.
var printed struct {
	sync.Mutex
	out map[[2]string]string
}

// printWords runs printf with span as its arguments through shell, in a
// directory holding files that a glob would match (the shared one when a
// test made it, see ShareDir), and returns what it printed; a span already
// run through shell is not run again (only its success is kept).
func printWords(t testing.TB, shell, span string) (string, error) {
	k := [2]string{shell, span}
	printed.Lock()
	out, ok := printed.out[k]
	printed.Unlock()
	if ok {
		return out, nil
	}
	// Held while the shell runs: the last ShareDir's cleanup removes the
	// directory only when no shell is in it.
	shared.RLock()
	defer shared.RUnlock()
	dir := shared.dir
	if dir == "" {
		dir = t.TempDir()
		if err := writeGlobFiles(dir); err != nil {
			return "", err
		}
	}
	out, err := Run(shell, dir, `printf '%s\0' `+span)
	if err != nil {
		return out, err
	}
	printed.Lock()
	defer printed.Unlock()
	if printed.out == nil {
		printed.out = map[[2]string]string{}
	}
	printed.out[k] = out
	return out, nil
}

// globFiles are the files of the directory Check's shells run in: what an
// unquoted glob in a name ("*", "a?", "[ab]", "x*y") would match, so that
// it changes the words printed.
var globFiles = []string{"a", "b", "eth1", "x y"}

func writeGlobFiles(dir string) error {
	for _, f := range globFiles {
		if err := os.WriteFile(dir+"/"+f, nil, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// shared is the directory ShareDir made, and how many tests use it.
var shared struct {
	sync.RWMutex
	dir  string
	refs int
}

// ShareDir makes Check run its shells, until t ends (its subtests
// included), in one directory of glob-matching files rather than in one
// made for each call: creating and removing those files is most of what
// Check costs on a test with many subtests (the rules package's
// TestFixQuotesNames made 356). Call it at the top of such a test.
func ShareDir(t testing.TB) {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.refs == 0 {
		dir, err := os.MkdirTemp("", "shellqtest-")
		if err != nil {
			t.Fatal(err)
		}
		if err := writeGlobFiles(dir); err != nil {
			os.RemoveAll(dir)
			t.Fatal(err)
		}
		shared.dir = dir
	}
	shared.refs++
	t.Cleanup(func() {
		shared.Lock()
		defer shared.Unlock()
		if shared.refs--; shared.refs == 0 {
			os.RemoveAll(shared.dir)
			shared.dir = ""
		}
	})
}
