// Package dnfs proves the network paths of an Oracle Direct NFS
// configuration: every local: -> path: pair of every server: entry of the
// oranfstab files check reads is probed from its local address with DF set
// (ICMP echo, since a filer runs no agent), and reported as the pmtu
// command reports a path: its MTU to the byte, a blackhole, an ICMP hop or
// the local interface as the limit.
package dnfs

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/pmtu"
)

// Schema names the JSON of a Result.
const Schema = "interlink.dnfs-paths/v1"

// Pair is one network path of a server entry: the local address dNFS
// sends from (Local empty: routing chooses) and the filer address.
type Pair struct {
	Server    string `json:"server"`
	File      string `json:"file"`
	Line      int    `json:"line"` // the path: line
	Local     string `json:"local,omitempty"`
	Path      string `json:"path"`
	Dontroute bool   `json:"dontroute,omitempty"`
}

// Proof is one pair and what probing it found. Error is set when it could
// not be probed (a name that does not resolve, a local address this node
// does not have).
type Proof struct {
	Pair
	Result *pmtu.Result `json:"result,omitempty"`
	Error  string       `json:"error,omitempty"`
	// MeetsExpect is set when an expected MTU was given.
	MeetsExpect *bool `json:"meets_expect,omitempty"`
}

// Result is the proof of every pair.
type Result struct {
	Schema string   `json:"schema"`
	Files  []string `json:"files"`
	Expect int      `json:"expect,omitempty"`
	Proofs []Proof  `json:"proofs"`
}

// Pairs lists the paths of every server entry of files, in file order.
// Paths beyond a server's locals have no local address.
func Pairs(files []*inventory.Oranfstab) []Pair {
	var out []Pair
	for _, t := range files {
		for _, s := range t.Servers {
			for i, p := range s.Paths {
				pr := Pair{Server: s.Name, File: t.File, Line: p.Line, Path: p.Value, Dontroute: s.Dontroute}
				if i < len(s.Locals) {
					pr.Local = s.Locals[i].Value
				}
				out = append(out, pr)
			}
		}
	}
	return out
}

// Options steer Prove.
type Options struct {
	Tries, Max, Expect int
	// Parallel bounds the pairs probed at once (default 4: one server's
	// paths together).
	Parallel int
	// Resolve looks up a name; nil uses the system resolver.
	Resolve func(ctx context.Context, host string) (netip.Addr, error)
}

// Prove probes every pair. It returns when all are done or ctx ends (the
// pairs not finished then carry the context's error).
func Prove(ctx context.Context, pairs []Pair, opt Options) []Proof {
	if opt.Parallel <= 0 {
		opt.Parallel = 4
	}
	if opt.Resolve == nil {
		opt.Resolve = resolve
	}
	out := make([]Proof, len(pairs))
	sem := make(chan struct{}, opt.Parallel)
	var wg sync.WaitGroup
	for i, p := range pairs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				out[i] = Proof{Pair: p, Error: "not probed: " + context.Cause(ctx).Error()}
				return
			}
			defer func() { <-sem }()
			out[i] = prove(ctx, p, opt)
		}()
	}
	wg.Wait()
	return out
}

func prove(ctx context.Context, p Pair, opt Options) Proof {
	pr := Proof{Pair: p}
	dst, err := opt.Resolve(ctx, p.Path)
	if err != nil {
		pr.Error = fmt.Sprintf("path %s: %v", p.Path, err)
		return pr
	}
	var src netip.Addr
	if p.Local != "" {
		if src, err = opt.Resolve(ctx, p.Local); err != nil {
			pr.Error = fmt.Sprintf("local %s: %v", p.Local, err)
			return pr
		}
	}
	prober, err := pmtu.NewICMPProberOpts(src, dst, pmtu.ICMPOptions{DontRoute: p.Dontroute && src.IsValid()})
	if err != nil {
		pr.Error = err.Error()
		return pr
	}
	defer prober.Close()
	r, err := pmtu.Run(ctx, prober, pmtu.Options{Tries: opt.Tries, Max: opt.Max, Expect: opt.Expect})
	r.Direction = pmtu.Forward
	pr.Result = &r
	if err != nil && r.Verdict == "" {
		pr.Result, pr.Error = nil, err.Error()
		return pr
	}
	pr.MeetsExpect, _ = pmtu.Judge(r, opt.Expect)
	return pr
}

func resolve(ctx context.Context, host string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap(), nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("cannot resolve: %w", err)
	}
	if len(addrs) == 0 {
		return netip.Addr{}, fmt.Errorf("cannot resolve: no address")
	}
	return addrs[0].Unmap(), nil
}
