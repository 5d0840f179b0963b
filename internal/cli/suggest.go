package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// suggestFlag returns "; did you mean --NAME?" for the flag of c (or its
// inherited flags) nearest to name, if one is within two edits.
func suggestFlag(c *cobra.Command, name string) string {
	best, dist := "", 3
	visit := func(f *pflag.Flag) {
		if d := editDistance(name, f.Name); d < dist {
			best, dist = f.Name, d
		}
	}
	c.Flags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	if best == "" {
		return ""
	}
	return "; did you mean --" + best + "?"
}

// suggestCommand returns " (did you mean NAME?)" for the subcommand of c
// nearest to name.
func suggestCommand(c *cobra.Command, name string) string {
	best, dist := "", 3
	for _, sub := range c.Commands() {
		if sub.Hidden {
			continue
		}
		if d := editDistance(name, sub.Name()); d < dist {
			best, dist = sub.Name(), d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
