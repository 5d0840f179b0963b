package mesh

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// WriteJSON writes res as one indented JSON document followed by a
// newline, byte for byte what json.Encoder with a two-space indent writes,
// but one path at a time: at 256 nodes the 65,280 paths indented at once
// took more memory than the whole run (the encoder holds the document
// twice, compact and indented).
func WriteJSON(w io.Writer, res *Result) error {
	shell := *res
	shell.Paths, shell.cells = nil, nil
	head, err := json.MarshalIndent(&shell, "", "  ")
	if err != nil {
		return err
	}
	marker := []byte("\n  \"paths\": null")
	i := bytes.Index(head, marker)
	if i < 0 {
		return fmt.Errorf("mesh: JSON without its paths field")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head[:i+len(marker)-len("null")])
	switch {
	case res.Paths == nil:
		bw.WriteString("null")
	case len(res.Paths) == 0:
		bw.WriteString("[]")
	default:
		bw.WriteString("[\n")
		for k, p := range res.Paths {
			b, err := json.MarshalIndent(p, "    ", "  ")
			if err != nil {
				return err
			}
			bw.WriteString("    ")
			bw.Write(b)
			if k < len(res.Paths)-1 {
				bw.WriteString(",")
			}
			bw.WriteString("\n")
		}
		bw.WriteString("  ]")
	}
	bw.Write(head[i+len(marker):])
	bw.WriteString("\n")
	return bw.Flush()
}
