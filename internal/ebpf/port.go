package ebpf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Port is what a switch port's classifier does in one direction: frames
// (or a GSO packet's segments) above MTU bytes of IP packet are dropped
// (0: no limit), and of the rest LossPercent are dropped at random (0:
// none, 100: all). Both are silent, as a real switch's drops are.
type Port struct {
	MTU         int
	LossPercent float64
}

// Limits of a Port.
const (
	// MinLossPercent is the smallest loss other than 0: one frame in
	// 100 000, far above the draw's resolution (one in 2^32).
	MinLossPercent = 0.001
	MaxLossPercent = 100
)

// Check says what is wrong with p, or nil.
func (p Port) Check() error {
	if p.MTU < 0 {
		return fmt.Errorf("MTU %d is negative", p.MTU)
	}
	if math.IsNaN(p.LossPercent) || p.LossPercent < 0 || p.LossPercent > MaxLossPercent ||
		(p.LossPercent > 0 && p.LossPercent < MinLossPercent) {
		return fmt.Errorf("loss %g%% is not 0 or %g%% to %d%%", p.LossPercent, MinLossPercent, MaxLossPercent)
	}
	return nil
}

// Filters reports whether p drops anything, that is whether the port
// needs the classifier in this direction.
func (p Port) Filters() bool { return p.MTU > 0 || p.LossPercent > 0 }

// filterName is what `tc filter show` prints for p's classifier
// (mtu_1500, loss_1%, mtu_1500_loss_0.5%), and what Read reads back.
func filterName(p Port) string {
	var parts []string
	if p.MTU > 0 {
		parts = append(parts, fmt.Sprintf("mtu_%d", p.MTU))
	}
	if p.LossPercent > 0 {
		parts = append(parts, "loss_"+strconv.FormatFloat(p.LossPercent, 'g', -1, 64)+"%")
	}
	return strings.Join(parts, "_")
}

// parseFilterName is filterName backwards; ok is false for a name that
// is not one of ours.
func parseFilterName(name string) (p Port, ok bool) {
	rest := name
	if m, found := strings.CutPrefix(rest, "mtu_"); found {
		num, after, more := strings.Cut(m, "_")
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 || more && !strings.HasPrefix(after, "loss_") {
			return Port{}, false
		}
		p.MTU, rest = v, after
	}
	if l, found := strings.CutPrefix(rest, "loss_"); found {
		v, err := strconv.ParseFloat(strings.TrimSuffix(l, "%"), 64)
		if err != nil || !strings.HasSuffix(l, "%") {
			return Port{}, false
		}
		p.LossPercent, rest = v, ""
	}
	return p, rest == "" && p.Filters() && p.Check() == nil
}

// lossThreshold is the value below which a bpf_get_prandom_u32 draw
// drops the frame: LossPercent of 2^32. 100% has none (every frame goes).
func (p Port) lossThreshold() uint32 {
	return uint32(math.Round(p.LossPercent / 100 * (1 << 32)))
}

// Counters are a port classifier's counts in one direction since it was
// attached: the frames it saw (a GSO packet counts once), those it
// dropped as larger than the MTU, and those it dropped at random.
type Counters struct {
	Frames      uint64 `json:"frames"`
	DroppedMTU  uint64 `json:"dropped_mtu"`
	DroppedLoss uint64 `json:"dropped_loss"`
}

// The counters map's keys (an array of u64).
const (
	keyFrames = iota
	keyDroppedMTU
	keyDroppedLoss
	numCounters
)

const (
	ethHeader = 14
	// skb field offsets (struct __sk_buff).
	skbLen     = 0
	skbGSOSize = 176
	// tc verdicts.
	tcActOK   = 0
	tcActShot = 2
)

// Program returns the classifier for p, counting into the array map
// whose fd is counters. At tc, skb->data and skb->len include the
// Ethernet header in both directions. The frame's length is compared
// with MTU plus the Ethernet header; for a GSO packet, the length of
// each segment it becomes: its headers plus gso_size. A frame that
// passes that is dropped at random with LossPercent's chance.
func (p Port) Program(counters int) []Insn {
	prog := []Insn{{Op: OpMov64Reg, Dst: 6, Src: 1}} // r6 = ctx (LD_ABS and the helpers' caller-saved registers want it there)
	prog = append(prog, count(counters, keyFrames, "")...)
	if p.MTU > 0 {
		prog = append(prog, sizeCheck(p.MTU+ethHeader)...)
	}
	// What follows "fits" must all be reachable: the verifier refuses
	// dead code, so the blocks are there only when something jumps to them.
	switch th := p.lossThreshold(); {
	case p.LossPercent >= MaxLossPercent:
		prog = append(prog, count(counters, keyDroppedLoss, "fits")...)
		prog = append(prog, Insn{Op: OpMov64Imm, Dst: 0, Imm: tcActShot}, Insn{Op: OpExit})
	case th > 0:
		prog = append(prog,
			Insn{Label: "fits", Op: OpCall, Imm: FuncGetPrandomU32},
			Insn{Op: OpJlt32Imm, Dst: 0, Imm: int32(th), Target: "lost"},
			Insn{Op: OpMov64Imm, Dst: 0, Imm: tcActOK}, Insn{Op: OpExit},
		)
		prog = append(prog, count(counters, keyDroppedLoss, "lost")...)
		prog = append(prog, Insn{Op: OpMov64Imm, Dst: 0, Imm: tcActShot}, Insn{Op: OpExit})
	default:
		prog = append(prog, Insn{Label: "fits", Op: OpMov64Imm, Dst: 0, Imm: tcActOK}, Insn{Op: OpExit})
	}
	if p.MTU > 0 {
		prog = append(prog, count(counters, keyDroppedMTU, "toobig")...)
		prog = append(prog, Insn{Op: OpMov64Imm, Dst: 0, Imm: tcActShot}, Insn{Op: OpExit})
	}
	return prog
}

// sizeCheck jumps to "toobig" when the frame (or each segment of a GSO
// packet) is longer than limit bytes, and goes on to "fits" otherwise.
func sizeCheck(limit int) []Insn {
	return []Insn{
		{Op: OpLdxW, Dst: 7, Src: 6, Off: skbLen},     // r7 = len
		{Op: OpLdxW, Dst: 8, Src: 6, Off: skbGSOSize}, // r8 = gso_size
		{Op: OpJeqImm, Dst: 8, Imm: 0, Target: "check"},
		// GSO: r7 = Ethernet + IP + TCP/UDP header length + gso_size.
		{Op: OpLdAbsH, Imm: 12}, // r0 = ethertype
		{Op: OpJeqImm, Dst: 0, Imm: 0x0800, Target: "v4"},
		{Op: OpJeqImm, Dst: 0, Imm: 0x86dd, Target: "v6"},
		{Op: OpJa, Target: "fits"},
		{Label: "v4", Op: OpLdAbsB, Imm: ethHeader}, // version and IHL
		{Op: OpAnd64Imm, Dst: 0, Imm: 0xf},
		{Op: OpLsh64Imm, Dst: 0, Imm: 2},
		{Op: OpMov64Reg, Dst: 9, Src: 0},
		{Op: OpAdd64Imm, Dst: 9, Imm: ethHeader}, // r9 = offset of the L4 header
		{Op: OpLdAbsB, Imm: ethHeader + 9},       // r0 = protocol
		{Op: OpJa, Target: "l4"},
		{Label: "v6", Op: OpMov64Imm, Dst: 9, Imm: ethHeader + 40},
		{Op: OpLdAbsB, Imm: ethHeader + 6}, // r0 = next header
		{Label: "l4", Op: OpJeqImm, Dst: 0, Imm: 6 /* TCP */, Target: "tcp"},
		{Op: OpMov64Reg, Dst: 7, Src: 9},
		{Op: OpAdd64Imm, Dst: 7, Imm: 8}, // UDP header
		{Op: OpJa, Target: "gso"},
		{Label: "tcp", Op: OpLdIndB, Src: 9, Imm: 12}, // data offset
		{Op: OpRsh64Imm, Dst: 0, Imm: 4},
		{Op: OpLsh64Imm, Dst: 0, Imm: 2},
		{Op: OpMov64Reg, Dst: 7, Src: 9},
		{Op: OpAdd64Reg, Dst: 7, Src: 0},
		{Label: "gso", Op: OpAdd64Reg, Dst: 7, Src: 8},
		{Label: "check", Op: OpJgtImm, Dst: 7, Imm: int32(limit), Target: "toobig"},
	}
}

// count adds one to counter key of the map whose fd is counters; label,
// when not "", labels its first instruction. It uses r0-r2 (and the
// helper call clobbers r1-r5), and the stack's top four bytes.
func count(counters, key int, label string) []Insn {
	return []Insn{
		{Label: label, Op: OpStW, Dst: 10, Off: -4, Imm: int32(key)}, // *(u32 *)(fp - 4) = key
		{Op: OpLdImm64, Dst: 1, Src: PseudoMapFD, Imm: int32(counters)},
		{Op: OpMov64Reg, Dst: 2, Src: 10},
		{Op: OpAdd64Imm, Dst: 2, Imm: -4},
		{Op: OpCall, Imm: FuncMapLookupElem},
		{Op: OpJeqImm, Dst: 0, Imm: 0, Off: 2}, // no value: skip the add
		{Op: OpMov64Imm, Dst: 1, Imm: 1},
		{Op: OpXAddDW, Dst: 0, Src: 1},
	}
}
