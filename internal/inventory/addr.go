package inventory

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net/netip"
	"sort"
	"strconv"
	"strings"
)

// gatherAddresses fills Interface.Addresses. IPv6 comes from
// /proc/net/if_inet6, which names the interface. No procfs file lists IPv4
// addresses per interface, so they are derived: the local addresses from
// /proc/net/fib_trie (the "/32 host LOCAL" leaves) matched to the connected
// routes of /proc/net/route, which name the interface. What cannot be
// matched that way (an address without a connected route) is reported in
// the "addresses" section rather than guessed.
func gatherAddresses(src *Source, inv *Inventory) {
	var notes []string
	status := "ok"
	v4 := map[string][]string{}
	if b, err := src.ReadFile("/proc/net/fib_trie"); err != nil {
		status = "partial"
		if isNotExist(err) && len(inv.Interfaces) == 0 {
			status = "absent" // no network part in this tree at all
		}
		notes = append(notes, fmt.Sprintf("IPv4 addresses not read: /proc/net/fib_trie: %s (use 'ip -4 addr')", errText(err)))
	} else if rb, err := src.ReadFile("/proc/net/route"); err != nil {
		status = "partial"
		notes = append(notes, fmt.Sprintf("IPv4 addresses not read: /proc/net/route: %s (use 'ip -4 addr')", errText(err)))
	} else {
		local, prefixes := ParseFibTrie(strings.NewReader(string(b)))
		routes, err := ParseRoutes(strings.NewReader(string(rb)))
		inv.Routes = routes
		if err != nil {
			status = "partial"
			notes = append(notes, "/proc/net/route: "+err.Error())
		}
		var unmatched []string
		for _, a := range local {
			ifname, bits := matchAddress(a, routes, prefixes)
			if ifname == "" {
				unmatched = append(unmatched, a.String())
				continue
			}
			v4[ifname] = append(v4[ifname], netip.PrefixFrom(a, bits).String())
		}
		if len(unmatched) > 0 {
			status = "partial"
			notes = append(notes, fmt.Sprintf("IPv4 %s: interface unknown (no connected route in /proc/net/route)", strings.Join(unmatched, ", ")))
		}
	}
	v6 := map[string][]string{}
	if b, err := src.ReadFile("/proc/net/if_inet6"); err == nil {
		v6 = ParseIfInet6(strings.NewReader(string(b)))
	} else if !isNotExist(err) {
		// Absent means IPv6 is disabled; anything else is worth saying.
		status = "partial"
		notes = append(notes, "/proc/net/if_inet6: "+errText(err))
	}
	n4, n6 := 0, 0
	for i := range inv.Interfaces {
		ifc := &inv.Interfaces[i]
		ifc.Addresses = append(append([]string{}, v4[ifc.Name]...), v6[ifc.Name]...)
		n4 += len(v4[ifc.Name])
		n6 += len(v6[ifc.Name])
	}
	if status == "ok" {
		notes = append(notes, fmt.Sprintf("%d IPv4 (fib_trie, route), %d IPv6 (if_inet6)", n4, n6))
	}
	inv.addSection("addresses", status, strings.Join(notes, "; "))
}

// Route is one line of /proc/net/route.
type Route struct {
	Interface   string       `json:"interface"`
	Destination netip.Prefix `json:"destination"`
	Gateway     netip.Addr   `json:"gateway"`
	Flags       uint32       `json:"flags"`
	Metric      int          `json:"metric"`
}

// ParseRoutes parses /proc/net/route (addresses in host byte order as hex).
func ParseRoutes(r io.Reader) ([]Route, error) {
	var out []Route
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if line == 1 || len(f) == 0 {
			continue
		}
		if len(f) < 8 {
			return out, fmt.Errorf("line %d: %d fields, want 11", line, len(f))
		}
		dst, err1 := hexAddr(f[1])
		gw, err2 := hexAddr(f[2])
		mask, err3 := hexAddr(f[7])
		flags, err4 := strconv.ParseUint(f[3], 16, 32)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			return out, fmt.Errorf("line %d: bad route %q", line, sc.Text())
		}
		bits := 0
		for _, b := range mask.AsSlice() {
			for ; b&0x80 != 0; b <<= 1 {
				bits++
			}
		}
		out = append(out, Route{Interface: f[0], Destination: netip.PrefixFrom(dst, bits).Masked(),
			Gateway: gw, Flags: uint32(flags), Metric: atoiOr(f[6], 0)})
	}
	return out, sc.Err()
}

// hexAddr decodes an IPv4 address written as the hex of a little-endian u32.
func hexAddr(s string) (netip.Addr, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 4 {
		return netip.Addr{}, fmt.Errorf("bad address %q", s)
	}
	var a [4]byte
	binary.BigEndian.PutUint32(a[:], binary.LittleEndian.Uint32(b))
	return netip.AddrFrom4(a), nil
}

// ParseFibTrie returns the local IPv4 addresses ("/32 host LOCAL") and the
// connected prefixes ("/N link UNICAST") listed in /proc/net/fib_trie.
func ParseFibTrie(r io.Reader) (local []netip.Addr, connected []netip.Prefix) {
	seenA := map[netip.Addr]bool{}
	seenP := map[netip.Prefix]bool{}
	var leaf netip.Addr
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		t := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(t, "|-- "):
			leaf, _ = netip.ParseAddr(strings.TrimPrefix(t, "|-- "))
		case strings.HasPrefix(t, "/") && leaf.IsValid():
			f := strings.Fields(t)
			bits := atoiOr(strings.TrimPrefix(f[0], "/"), -1)
			if len(f) < 3 || bits < 0 {
				continue
			}
			switch {
			case bits == 32 && f[1] == "host" && f[2] == "LOCAL" && !seenA[leaf]:
				seenA[leaf] = true
				local = append(local, leaf)
			case f[1] == "link" && f[2] == "UNICAST":
				if p := netip.PrefixFrom(leaf, bits); p.IsValid() && !seenP[p] {
					seenP[p] = true
					connected = append(connected, p)
				}
			}
		}
	}
	sort.Slice(local, func(i, j int) bool { return local[i].Less(local[j]) })
	return local, connected
}

// matchAddress finds the interface of a local address: the most specific
// connected route (no gateway) that contains it. Loopback addresses belong
// to lo.
func matchAddress(a netip.Addr, routes []Route, connected []netip.Prefix) (string, int) {
	if a.IsLoopback() {
		return "lo", 8
	}
	best, bits := "", -1
	for _, r := range routes {
		if r.Gateway.IsUnspecified() && r.Destination.Bits() > 0 && r.Destination.Contains(a) && r.Destination.Bits() > bits {
			best, bits = r.Interface, r.Destination.Bits()
		}
	}
	if best == "" {
		return "", 0
	}
	// The fib's connected prefix is the address's own prefix length, which
	// a route with a metric or a narrower static route may not show.
	own := -1
	for _, p := range connected {
		if p.Contains(a) && p.Bits() > own {
			own = p.Bits()
		}
	}
	if own >= 0 {
		bits = own
	}
	return best, bits
}

// ParseIfInet6 parses /proc/net/if_inet6 into CIDR addresses per interface.
func ParseIfInet6(r io.Reader) map[string][]string {
	out := map[string][]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 6 || len(f[0]) != 32 {
			continue
		}
		b, err := hex.DecodeString(f[0])
		if err != nil {
			continue
		}
		bits, err := strconv.ParseUint(f[2], 16, 8)
		if err != nil || bits > 128 {
			continue
		}
		a := netip.AddrFrom16([16]byte(b))
		out[f[5]] = append(out[f[5]], netip.PrefixFrom(a, int(bits)).String())
	}
	return out
}
