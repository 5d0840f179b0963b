package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/store"
	"github.com/interlink/interlink/internal/termtext"
)

func init() { commands = append(commands, newHistoryCmd) }

func newHistoryCmd(e *env) *cobra.Command {
	var (
		db, command, since string
		labels             []string
		limit              int
		asJSON             bool
	)
	c := &cobra.Command{
		Use:   "history",
		Short: "List the results saved with --save, newest first, filtered by command, time and label",
		Long: `history lists the results that check, pmtu, mesh, bench, ab and lab demo recorded
with --save or --save-as NAME: id, time, host, command, baseline name, labels and
the verdict in a few words. The history is one SQLite file, by default
$XDG_DATA_HOME/interlink/history.db (~/.local/share/interlink/history.db), or --db.
Compare two of them with 'interlink diff'.

--since takes a duration back from now (90m, 24h, 7d) or a date (2026-11-01, or
RFC 3339). Exit 0; 3 when the file is not an interlink history (it is left as it is).`,
		Example: `  interlink mesh --nodes nodes.txt --expect 9000 --save-as known-good --label site=dc1
  interlink history --command mesh --since 7d
  interlink history --label site=dc1 --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			f := store.Filter{Command: command, Limit: limit, Labels: map[string]string{}}
			if limit < 1 {
				return usageError("history: --limit %d: want 1 or more", limit)
			}
			if saving := savingCommands(cmd.Root()); command != "" && !slices.Contains(saving, command) {
				// A typo listed "no saved results", as if none were saved.
				return usageError("history: --command %q: no command saves results by that name (%s)", termtext.Clean(command), strings.Join(saving, ", "))
			}
			if since != "" {
				t, err := parseSince(since, time.Now())
				if err != nil {
					return usageError("history: --since %q: %v", termtext.Clean(since), err)
				}
				f.Since = t
			}
			for _, l := range labels {
				k, v, ok := cutLabel(l)
				if !ok || k == "" {
					return usageError("history: --label %q: want KEY=VALUE", termtext.Clean(l))
				}
				f.Labels[k] = v
			}
			st, err := openStore("history", db, store.OpenRead)
			if err != nil {
				return err
			}
			defer st.Close()
			rs, err := st.List(f)
			if err != nil {
				return usageError("history: %s: %s", termtext.Clean(st.Path()), termtext.Clean(err.Error()))
			}
			doc := store.NewHistory(st, rs)
			if asJSON {
				return report.JSON(e.stdout, doc)
			}
			return doc.WriteText(e.stdout)
		},
	}
	fs := c.Flags()
	addDBFlag(fs, &db)
	fs.StringVar(&command, "command", "", "only this command's results (check, pmtu, mesh, bench, ab, lab demo)")
	fs.StringVar(&since, "since", "", "only results from this long ago (24h, 7d) or this date on")
	fs.StringArrayVar(&labels, "label", nil, "only results labelled KEY=VALUE (repeatable: all must match)")
	fs.IntVar(&limit, "limit", 50, "at most this many results")
	fs.BoolVar(&asJSON, "json", false, "print JSON (schema interlink.history/v1)")
	return c
}

// savingCommands names, as the history records them ("lab demo"), the
// commands that can save a result: those with a --save flag.
func savingCommands(c *cobra.Command) []string {
	var out []string
	if c.HasParent() && c.Flags().Lookup("save") != nil {
		out = append(out, cmdPath(c))
	}
	for _, sub := range c.Commands() {
		out = append(out, savingCommands(sub)...)
	}
	slices.Sort(out)
	return out
}

// maxSinceDays bounds --since Nd: a hundred years.
const maxSinceDays = 36525

// parseSince reads a duration back from now (with d for days) or a date.
func parseSince(s string, now time.Time) (time.Time, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if days, err := strconv.Atoi(n); err == nil && days >= 0 {
			// A count of days near the int limit wrapped the date into
			// the future: nothing matched, silently.
			if days > maxSinceDays {
				return time.Time{}, fmt.Errorf("more than %d days (100 years) back; leave --since out to list everything", maxSinceDays)
			}
			return now.AddDate(0, 0, -days), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("want a duration (90m, 24h, 7d) or a date (2026-11-01, RFC 3339)")
}
