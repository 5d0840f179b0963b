package cluster

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/interlink/interlink/internal/termtext"
)

// parseINI reads an Ansible INI inventory: [group], [group:vars] and
// [group:children] sections; host lines "NAME key=value ...".
func parseINI(data []byte, file string) ([]Host, error) {
	t := newTree()
	sc := bufio.NewScanner(bytes.NewReader(data))
	section, kind := "ungrouped", ""
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' || text[0] == ';' {
			continue
		}
		if text[0] == '[' {
			if !strings.HasSuffix(text, "]") {
				return nil, fmt.Errorf("%s:%d: section header %q has no closing ]", file, line, text)
			}
			section, kind, _ = strings.Cut(text[1:len(text)-1], ":")
			if kind != "" && kind != "vars" && kind != "children" {
				return nil, fmt.Errorf("%s:%d: section [%s:%s]: want :vars or :children", file, line, section, kind)
			}
			t.group(section)
			continue
		}
		fields, err := splitINI(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, line, err)
		}
		g := t.group(section)
		switch kind {
		case "vars":
			k, v, ok := strings.Cut(text, "=")
			if !ok {
				return nil, fmt.Errorf("%s:%d: [%s:vars] wants key=value, got %q", file, line, section, text)
			}
			g.vars[strings.TrimSpace(k)] = unquote(strings.TrimSpace(v))
		case "children":
			g.children = append(g.children, fields[0])
			t.group(fields[0])
		default:
			v := vars{}
			for _, f := range fields[1:] {
				k, val, ok := strings.Cut(f, "=")
				if !ok {
					return nil, fmt.Errorf("%s:%d: host %s: want key=value, got %q", file, line, fields[0], f)
				}
				v[k] = unquote(val)
			}
			names, err := expand(fields[0])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", file, line, err)
			}
			for _, n := range names {
				if err := t.addHost(g, n, v); err != nil {
					return nil, fmt.Errorf("%s:%d: %v", file, line, err)
				}
			}
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("%s: a line longer than %d bytes: not an inventory", file, bufio.MaxScanTokenSize)
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return t.hosts(file)
}

// splitINI splits a host line on blanks, keeping quoted values whole.
func splitINI(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			cur.WriteRune(r)
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
			cur.WriteRune(r)
		case r == '#' && cur.Len() == 0:
			return out, nil // a trailing comment
		case r == ' ' || r == '\t':
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote in %s", termtext.Short(s, 60))
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out, nil
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}
