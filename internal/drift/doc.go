package drift

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/textout"
)

// Doc is the document of `interlink diff --json` (schema Schema): the two
// results compared and what changed between them.
type Doc struct {
	Schema   string `json:"schema"`
	Baseline Ref    `json:"baseline"`
	Result   Ref    `json:"result"`
	Diff     *Diff  `json:"diff"`
}

// Ref says where a compared result came from: the history (ID, and Name
// for a baseline) or a file. Value is the decoded result itself, which
// Compare takes; it is not part of the document.
type Ref struct {
	ID      int64     `json:"id,omitempty"`
	Name    string    `json:"name,omitempty"`
	File    string    `json:"file,omitempty"`
	Command string    `json:"command"`
	Host    string    `json:"host,omitempty"`
	Time    time.Time `json:"time,omitzero"`

	Value any `json:"-"`
}

func (r Ref) String() string {
	s := r.Command + " result"
	switch {
	case r.File != "":
		return s + " " + r.File
	case r.Name != "":
		s += fmt.Sprintf(" %d %q", r.ID, r.Name)
	default:
		s += fmt.Sprintf(" %d", r.ID)
	}
	return s + fmt.Sprintf(" (%s on %s)", r.Time.Local().Format("2006-01-02 15:04:05"), r.Host)
}

// WriteText writes the comparison for a terminal: the two results, one
// line per change (WORSE or CHANGED), what was not judged, and the verdict.
func (d Doc) WriteText(out io.Writer) error {
	w := textout.New(out)
	fmt.Fprintf(w, "interlink diff: %s\n       against %s\n", termtext.Clean(d.Result.String()), termtext.Clean(d.Baseline.String()))
	worse := 0
	for _, c := range d.Diff.Changes {
		tag := "CHANGED"
		if c.Worse {
			tag, worse = "WORSE  ", worse+1
		}
		fmt.Fprintf(w, "  %s %s: %s -> %s", tag, termtext.Clean(c.What), termtext.Clean(c.Before), termtext.Clean(c.After))
		if c.Detail != "" {
			fmt.Fprintf(w, "  (%s)", termtext.Clean(c.Detail))
		}
		fmt.Fprintln(w)
	}
	if len(d.Diff.NotJudged) > 0 {
		fmt.Fprintf(w, "  not judged (too few samples to tell noise from change): %s\n", termtext.Clean(strings.Join(d.Diff.NotJudged, ", ")))
	}
	fmt.Fprintf(w, "%s: %d change(s), %d worse, among %d compared\n", d.Diff.Verdict, len(d.Diff.Changes), worse, d.Diff.Compared)
	return w.Err()
}
