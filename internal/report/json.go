// Package report renders result types as text and JSON. Renderers never
// compute: they format what the collectors and engines produced.
package report

import (
	"encoding/json"
	"io"
)

// JSON writes v as one indented JSON document followed by a newline.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
