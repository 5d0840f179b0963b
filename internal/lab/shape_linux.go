package lab

import (
	"fmt"

	"github.com/vishvananda/netlink"

	"github.com/interlink/interlink/internal/units"
)

// shape puts the token-bucket qdisc that shapes link to rate, then reads it
// back: a rate of 2^32 bytes/s (34.36 Gbit/s) or more travels in
// TCA_TBF_RATE64 (Linux 3.13), which an older kernel ignores without an
// error, keeping the low 32 bits of the rate. The qdisc the kernel reports
// is what the lab's traffic meets, so a link shaped to another rate than
// the topology's is refused rather than measured.
func shape(h *netlink.Handle, link netlink.Link, rateBitsPerSec int64, mtu int) error {
	q := tbf(link.Attrs().Index, rateBitsPerSec, mtu)
	if err := h.QdiscAdd(q); err != nil {
		return err
	}
	qs, err := h.QdiscList(link)
	if err == nil {
		err = shapedAsAsked(q, qs)
	} else {
		err = fmt.Errorf("read back the rate: %w", err)
	}
	if err != nil {
		// No link is left shaped at a rate nobody asked for (lab set
		// stops here; lab up removes the whole lab).
		if derr := h.QdiscDel(q); derr != nil {
			err = fmt.Errorf("%w (and removing it: %v)", err, derr)
		}
	}
	return err
}

// shapedAsAsked checks that qs (a link's qdiscs as the kernel lists them)
// holds want's tbf at want's rate.
func shapedAsAsked(want *netlink.Tbf, qs []netlink.Qdisc) error {
	for _, q := range qs {
		got, ok := q.(*netlink.Tbf)
		if !ok || got.Attrs().Handle != want.Attrs().Handle {
			continue
		}
		if got.Rate == want.Rate {
			return nil
		}
		msg := fmt.Sprintf("the kernel shapes the link at %s, not the %s asked", units.FormatRate(float64(got.Rate)*8), units.FormatRate(float64(want.Rate)*8))
		if want.Rate >= 1<<32 {
			msg += "; a rate above 34.36 Gbit/s needs TCA_TBF_RATE64 (Linux 3.13): give this link a lower rate on this kernel"
		}
		return fmt.Errorf("%s", msg)
	}
	return fmt.Errorf("the kernel lists no tbf qdisc %s on the link after adding it", netlink.HandleStr(want.Attrs().Handle))
}

// tbf returns the token-bucket qdisc that shapes a link to rate: a bucket
// of 4 ms at rate (at least two full frames, so a frame always fits) and a
// queue of 50 ms at rate (at least 64 KiB, one GSO super-packet).
func tbf(index int, rateBitsPerSec int64, mtu int) *netlink.Tbf {
	bytesPerSec := uint64(rateBitsPerSec / 8)
	burst := max(bytesPerSec/250, uint64(2*(mtu+14)), 16<<10)
	limit := max(bytesPerSec/20, 64<<10)
	return &netlink.Tbf{
		QdiscAttrs: netlink.QdiscAttrs{LinkIndex: index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
		Rate:       bytesPerSec,
		Limit:      uint32(min(limit, 1<<30)),
		Buffer:     netlink.Xmittime(bytesPerSec, uint32(burst)),
	}
}
