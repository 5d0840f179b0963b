// Command docgen writes interlink's man pages, the Markdown reference pages
// and the README's command table from the command definitions, so help, man
// pages, reference and README cannot drift apart:
//
//	go run ./internal/docgen -man DIR              # interlink.1, interlink-pmtu.1, ...
//	go run ./internal/docgen -reference docs/reference  # interlink.md, interlink-pmtu.md, ...
//	go run ./internal/docgen -readme README.md     # the table between the markers
//
// Its tests check that the committed pages, the README's table and the
// guides' command lines agree with the command definitions, and that every
// relative link in README.md and docs/ leads somewhere.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra/doc"

	"github.com/interlink/interlink/internal/cli"
)

func main() {
	man := flag.String("man", "", "write man pages (section 1) into this directory")
	ref := flag.String("reference", "", "write one Markdown reference page per command into this directory")
	readme := flag.String("readme", "", "rewrite the command table in this README")
	version := flag.String("version", "devel", "version named in the man pages' footer")
	flag.Parse()
	if *man == "" && *ref == "" && *readme == "" {
		fmt.Fprintln(os.Stderr, "docgen: give -man DIR, -reference DIR and/or -readme FILE")
		os.Exit(3)
	}
	root := cli.NewRoot(io.Discard, io.Discard)
	root.DisableAutoGenTag = true
	if *man != "" {
		if err := os.MkdirAll(*man, 0o755); err != nil {
			fail(err)
		}
		hdr := &doc.GenManHeader{Title: "INTERLINK", Section: "1", Source: "interlink " + *version, Manual: "interlink manual"}
		if err := doc.GenManTree(root, hdr, *man); err != nil {
			fail(err)
		}
	}
	if *ref != "" {
		if err := WriteReference(*ref, ReferencePages(cli.NewRoot(io.Discard, io.Discard))); err != nil {
			fail(err)
		}
	}
	if *readme != "" {
		b, err := os.ReadFile(*readme)
		if err != nil {
			fail(err)
		}
		out, err := cli.ReplaceCommandTable(b, cli.CommandTable(cli.NewRoot(io.Discard, io.Discard)))
		if err != nil {
			fail(err)
		}
		if !bytes.Equal(out, b) {
			if err := os.WriteFile(*readme, out, 0o644); err != nil {
				fail(err)
			}
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "docgen:", strings.TrimSpace(err.Error()))
	os.Exit(3)
}
