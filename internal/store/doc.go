package store

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/interlink/interlink/internal/termtext"
)

// HistorySchema is the schema of `interlink history --json`.
const HistorySchema = "interlink.history/v1"

// History is the document of `interlink history --json`: the results a
// List found in the history at DB, newest first. Results is never nil in
// a History made by NewHistory, so the JSON says [] rather than null.
type History struct {
	Schema  string   `json:"schema"`
	DB      string   `json:"db"`
	Results []Record `json:"results"`
}

// NewHistory returns the document for the records rs listed from s.
func NewHistory(s *Store, rs []Record) History {
	if rs == nil {
		rs = []Record{}
	}
	return History{Schema: HistorySchema, DB: s.Path(), Results: rs}
}

// WriteText writes the history as a table, one result a line: id, time,
// host, command, baseline name, labels and the verdict in a few words.
func (h History) WriteText(w io.Writer) error {
	if len(h.Results) == 0 {
		_, err := fmt.Fprintf(w, "no saved results match in %s\n", termtext.Clean(h.DB))
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTIME\tHOST\tCOMMAND\tNAME\tLABELS\tSUMMARY")
	for _, r := range h.Results {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Time.Local().Format("2006-01-02 15:04:05"), termtext.Clean(r.Host),
			r.Command, orDash(termtext.Clean(r.Name)), orDash(termtext.Clean(labelText(r.Labels))), termtext.Clean(r.Summary))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func labelText(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
