package lab

import (
	"runtime"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/roottest"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// TestShapedAsAsked: a link rate the kernel did not take is refused in one
// line. A kernel before 3.13 ignores TCA_TBF_RATE64 and keeps the low 32
// bits of a rate of 2^32 bytes/s or more (a 40 Gbit/s link shaped to 5.6
// Gbit/s, without an error): the seam is the qdisc list as that kernel
// reports it. Then the real kernel here, in a namespace of the test's own,
// shapes a veth link at 1 and 40 Gbit/s and reads both back as asked.
func TestShapedAsAsked(t *testing.T) {
	want := tbf(7, 40_000_000_000, 9000)
	old := *want
	old.Rate = uint64(uint32(want.Rate)) // what a pre-3.13 kernel kept
	err := shapedAsAsked(want, []netlink.Qdisc{&netlink.Ingress{}, &old})
	if err == nil || !strings.Contains(err.Error(), "TCA_TBF_RATE64 (Linux 3.13)") || !strings.Contains(err.Error(), "40.00 Gbit/s asked") ||
		strings.Contains(err.Error(), "\n") {
		t.Errorf("a rate the kernel truncated: %v", err)
	}
	if err := shapedAsAsked(want, []netlink.Qdisc{want}); err != nil {
		t.Errorf("the rate as asked: %v", err)
	}
	if err := shapedAsAsked(want, nil); err == nil || !strings.Contains(err.Error(), "no tbf") {
		t.Errorf("no tbf listed: %v", err)
	}

	roottest.Require(t, "the live half builds a network namespace")
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	ns, err := netns.New()
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close() // the namespace, and the veth pair in it, go with the last reference
	if err := netns.Set(orig); err != nil {
		t.Fatal(err) // the thread stays locked: the runtime drops it
	}
	runtime.UnlockOSThread()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "shape0", MTU: 9000}, PeerName: "shape1"}); err != nil {
		t.Fatal(err)
	}
	link, err := h.LinkByName("shape0")
	if err != nil {
		t.Fatal(err)
	}
	for _, rate := range []int64{1_000_000_000, 40_000_000_000} {
		if err := shape(h, link, rate, 9000); err != nil {
			t.Errorf("%d bit/s: %v", rate, err)
		}
		if err := delQdisc(h, tbf(link.Attrs().Index, rate, 9000)); err != nil {
			t.Fatal(err)
		}
	}
}
