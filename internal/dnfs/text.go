package dnfs

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/textout"
)

// WriteText writes the proofs as one table per server: the oranfstab line,
// local address (and dontroute), path, the interface it left by, the path
// MTU and verdict against the expected MTU, and the detail.
func (res *Result) WriteText(out io.Writer) error {
	w := textout.New(out)
	fmt.Fprintf(w, "interlink pmtu --storage: %d Direct NFS path(s) in %s (ICMP echo with DF from each local address)\n",
		len(res.Proofs), termtext.Clean(strings.Join(res.Files, ", ")))
	server := ""
	var tw *tabwriter.Writer
	for _, p := range res.Proofs {
		if key := p.File + "\x00" + p.Server; key != server {
			if tw != nil {
				tw.Flush()
			}
			server = key
			fmt.Fprintf(w, "\nserver %s (%s)\n", termtext.Clean(p.Server), termtext.Clean(p.File))
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "  LINE\tLOCAL\tPATH\tVIA\tPATH MTU\tVERDICT\tDETAIL\n")
		}
		local := p.Local
		if local == "" {
			local = "(routing)"
		}
		if p.Dontroute && p.Local != "" {
			local += " dontroute"
		}
		if p.Result == nil {
			fmt.Fprintf(tw, "  %d\t%s\t%s\t-\t-\tnot probed\t%s\n", p.Line, termtext.Clean(local), termtext.Clean(p.Path), termtext.Clean(p.Error))
			continue
		}
		r := p.Result
		via := fmt.Sprintf("%s (MTU %d)", r.LocalIface, r.LocalMTU)
		mark := ""
		if p.MeetsExpect != nil && !*p.MeetsExpect {
			mark = fmt.Sprintf(" BELOW --expect %d", res.Expect)
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%d\t%s%s\t%s\n", p.Line, termtext.Clean(local), termtext.Clean(p.Path), via, r.PathMTU, r.Verdict, mark, termtext.Clean(r.Detail))
	}
	if tw != nil {
		tw.Flush()
	}
	return w.Err()
}
