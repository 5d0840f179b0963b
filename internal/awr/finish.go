package awr

import "github.com/interlink/interlink/internal/termtext"

// clean makes text taken from a report safe to show: control characters,
// terminal escapes and invalid UTF-8 become visible escapes
// (termtext.Clean). AWR names never hold them; a hostile report might.
func clean(s string) string { return termtext.Clean(s) }

// finish fills the report from what was read.
func (b *builder) finish() {
	b.hdr.apply(b)
	b.rep.File, b.rep.DBName, b.rep.DBID, b.rep.Release = clean(b.rep.File), clean(b.rep.DBName), clean(b.rep.DBID), clean(b.rep.Release)
	for _, in := range b.byNum {
		in.Name, in.Host = clean(in.Name), clean(in.Host)
		for i := range in.Waits {
			in.Waits[i].Name = clean(in.Waits[i].Name)
		}
		for i := range in.Clients {
			in.Clients[i].Client = clean(in.Clients[i].Client)
		}
		for i := range in.Devices {
			d := &in.Devices[i]
			d.Name, d.Address, d.Public, d.Source = clean(d.Name), clean(d.Address), clean(d.Public), clean(d.Source)
		}
	}
	if b.rep.Kind == KindInstance && len(b.order) == 0 {
		b.only()
	}
	if b.rep.Kind == KindGlobal {
		b.finishGlobal()
	}
	for _, d := range sections {
		if d.cluster && len(b.filled[d.key]) > 0 {
			b.rep.Cluster = true
		}
	}
	for _, n := range b.order {
		in := b.byNum[n]
		finishLost(in, b.rep.RAC)
		finishSamples(in)
		for _, k := range sectionOrder[b.rep.Kind] {
			st := "absent"
			switch {
			case b.filled[k][n]:
				st = "present"
			case b.titled[k]:
				st = "empty"
			}
			in.Sections = append(in.Sections, SectionStatus{Name: k, Status: st})
		}
		b.rep.Instances = append(b.rep.Instances, *in)
	}
	for _, d := range sections {
		if n := b.bad[d.key]; n > 0 {
			b.note("%s: %d row(s) could not be read and were skipped", d.key, n)
		}
	}
	if !b.rep.Cluster {
		b.note("%s", noClusterNote(b.rep.RAC, b.ended, b.pdb))
	}
	if b.rep.Notes == nil {
		b.rep.Notes = []string{}
	}
	if b.rep.Instances == nil {
		b.rep.Instances = []Instance{}
	}
}

// noClusterNote says why a report holds no cluster section, as far as the
// report tells: its header's RAC column and whether it ends with "End of
// Report" (a report cut short does not).
func noClusterNote(rac *bool, ended, pdb bool) string {
	switch {
	case pdb:
		return "no cluster sections: a PDB report (its title says WORKLOAD REPOSITORY PDB report), which holds none; a report of the whole database has them"
	case rac != nil && !*rac:
		return "no cluster sections: a single-instance database (RAC NO)"
	case rac != nil && ended:
		return "no cluster sections although RAC is YES: the report is whole (it ends with End of Report), so it was written without them"
	case rac != nil:
		return "no cluster sections although RAC is YES: the report ends before them (no End of Report): cut short"
	case ended:
		return "no cluster sections (the report does not say whether the database is RAC)"
	}
	return "no cluster sections: a single-instance database, or a report cut before them"
}
