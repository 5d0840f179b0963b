// Package ebpf is a small eBPF assembler and loader for the lab's switch
// ports: Insn and Assemble turn a program written as Go values (labels
// instead of hand-counted jump offsets) into the kernel's encoding, Port
// is the classifier a lab switch port runs (drop frames above an MTU, GSO
// segments included, and drop a share of frames at random), and on Linux
// Load, Attach, Read and TestRun load it with its counters map,
// attach it to a port with clsact, read what it dropped, and run it over
// a frame in the kernel (BPF_PROG_TEST_RUN) without any network.
//
// It is pure Go (the bpf(2) syscall through golang.org/x/sys/unix); there
// is no C, no clang and no libbpf.
package ebpf

import (
	"encoding/binary"
	"fmt"
)

// Opcodes used by the programs here (linux/bpf.h, linux/bpf_common.h).
const (
	OpMov64Reg  = 0xbf // dst = src
	OpMov64Imm  = 0xb7 // dst = imm
	OpLdxW      = 0x61 // dst = *(u32 *)(src + off)
	OpStW       = 0x62 // *(u32 *)(dst + off) = imm
	OpLdAbsH    = 0x28 // r0 = ntohs(*(u16 *)(skb->data + imm))
	OpLdAbsB    = 0x30 // r0 = *(u8 *)(skb->data + imm)
	OpLdIndB    = 0x50 // r0 = *(u8 *)(skb->data + src + imm)
	OpLdImm64   = 0x18 // dst = imm64 (two instruction slots); src 1: imm is a map fd
	OpXAddDW    = 0xdb // lock *(u64 *)(dst + off) += src
	OpAnd64Imm  = 0x57
	OpLsh64Imm  = 0x67
	OpRsh64Imm  = 0x77
	OpAdd64Imm  = 0x07
	OpAdd64Reg  = 0x0f
	OpJeqImm    = 0x15
	OpJgtImm    = 0x25
	OpJlt32Imm  = 0xa6 // if (u32)dst < (u32)imm (BPF_JMP32, Linux 5.1)
	OpJa        = 0x05
	OpCall      = 0x85 // imm: helper id
	OpExit      = 0x95
	PseudoMapFD = 1 // src of OpLdImm64 when imm is a map's fd
)

// Helper function ids (enum bpf_func_id).
const (
	FuncMapLookupElem = 1
	FuncGetPrandomU32 = 7
)

// Insn is one instruction. Target names the Label of the instruction a
// jump goes to; Assemble turns it into Off. A jump without Target keeps
// its Off as given (counted in instruction slots, from the next one).
// OpLdImm64 takes two slots: Imm is its low 32 bits, ImmHi the high.
type Insn struct {
	Op       uint8
	Dst, Src uint8
	Off      int16
	Imm      int32
	ImmHi    int32
	Target   string // the label a jump goes to
	Label    string // this instruction's label
}

// slots is how many 8-byte instruction slots in takes.
func (in Insn) slots() int {
	if in.Op == OpLdImm64 {
		return 2
	}
	return 1
}

// isJump reports whether in's Off is a jump offset.
func (in Insn) isJump() bool {
	class := in.Op & 0x07
	return (class == 0x05 || class == 0x06) && in.Op != OpCall && in.Op != OpExit
}

// Assemble resolves labels and encodes the program. Jump offsets count
// instruction slots, so a jump across an OpLdImm64 skips two. A label
// given twice, a target that names no label, a Target on an instruction
// that does not jump, and an offset that does not fit an int16 are errors.
func Assemble(prog []Insn) ([]byte, error) {
	at := map[string]int{} // label -> slot
	slot := 0
	for i, in := range prog {
		if in.Label != "" {
			if _, dup := at[in.Label]; dup {
				return nil, fmt.Errorf("bpf: label %q given twice (instruction %d)", in.Label, i)
			}
			at[in.Label] = slot
		}
		slot += in.slots()
	}
	out := make([]byte, 0, 8*slot)
	slot = 0
	for i, in := range prog {
		off := in.Off
		if in.Target != "" {
			if !in.isJump() {
				return nil, fmt.Errorf("bpf: instruction %d (op %#x) does not jump, but has target %q", i, in.Op, in.Target)
			}
			t, ok := at[in.Target]
			if !ok {
				return nil, fmt.Errorf("bpf: no label %q (instruction %d)", in.Target, i)
			}
			rel := t - slot - 1
			if rel < -1<<15 || rel >= 1<<15 {
				return nil, fmt.Errorf("bpf: jump from instruction %d to %q is %d slots, too far", i, in.Target, rel)
			}
			off = int16(rel)
		}
		var b [8]byte
		b[0] = in.Op
		b[1] = in.Dst&0xf | in.Src<<4
		binary.LittleEndian.PutUint16(b[2:], uint16(off))
		binary.LittleEndian.PutUint32(b[4:], uint32(in.Imm))
		out = append(out, b[:]...)
		if in.Op == OpLdImm64 {
			var hi [8]byte
			binary.LittleEndian.PutUint32(hi[4:], uint32(in.ImmHi))
			out = append(out, hi[:]...)
		}
		slot += in.slots()
	}
	return out, nil
}
