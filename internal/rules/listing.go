package rules

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// ListingSchema names the JSON of `interlink check --rules`.
const ListingSchema = "interlink.check-rules/v1"

// RuleInfo is one row of the rules listing: Severity is the severity of the
// rule's findings except under the conditions Also lists.
type RuleInfo struct {
	ID       string         `json:"id"`
	Severity Severity       `json:"severity"`
	Also     []SeverityCase `json:"also"`
	Title    string         `json:"title"`
	Source   string         `json:"source"`
}

// Listing is the JSON document of the rules listing.
type Listing struct {
	Schema string     `json:"schema"`
	Rules  []RuleInfo `json:"rules"`
}

// List returns every rule as a listing row, sorted by id.
func List() Listing {
	all := All()
	l := Listing{Schema: ListingSchema, Rules: make([]RuleInfo, 0, len(all))}
	for _, r := range all {
		l.Rules = append(l.Rules, RuleInfo{ID: r.ID, Severity: r.Severity, Also: append([]SeverityCase{}, r.Also...), Title: r.Title, Source: r.Source})
	}
	return l
}

// WriteListing writes the rules as a table: id, the severities each may
// emit, and what it detects with the conditions of its other severities.
func WriteListing(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "RULE\tSEVERITY\tDETECTS\n")
	for _, r := range All() {
		title := r.Title
		if c := r.Conditions(); c != "" {
			title += "; " + c
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, r.SeverityText(), title)
	}
	return tw.Flush()
}
