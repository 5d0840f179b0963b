package ebpf

import (
	"encoding/binary"
	"strings"
	"testing"
)

// off returns the jump offset of the instruction at slot s of code.
func off(code []byte, s int) int16 {
	return int16(binary.LittleEndian.Uint16(code[8*s+2:]))
}

// TestAssembleLabels: forward and backward jumps resolve to the slot
// after which they count, a jump across an OpLdImm64 skips its two slots,
// a jump without a target keeps its offset, and registers and immediates
// are where the kernel reads them.
func TestAssembleLabels(t *testing.T) {
	prog := []Insn{
		{Label: "top", Op: OpMov64Imm, Dst: 0, Imm: -7},             // slot 0
		{Op: OpJeqImm, Dst: 3, Imm: 1, Target: "end"},               // slot 1
		{Op: OpLdImm64, Dst: 1, Src: PseudoMapFD, Imm: 5, ImmHi: 9}, // slots 2-3
		{Op: OpJa, Target: "top"},                                   // slot 4
		{Op: OpJeqImm, Dst: 0, Off: 1},                              // slot 5
		{Op: OpJa, Target: "next"},                                  // slot 6
		{Label: "next", Op: OpMov64Reg, Dst: 7, Src: 9},             // slot 7
		{Label: "end", Op: OpExit},                                  // slot 8
	}
	code, err := Assemble(prog)
	if err != nil {
		t.Fatal(err)
	}
	if len(code) != 9*8 {
		t.Fatalf("%d bytes, want 9 slots of 8 (OpLdImm64 takes two)", len(code))
	}
	for _, c := range []struct {
		slot int
		want int16
		why  string
	}{
		{1, 6, "forward across the two-slot load: 8-1-1"},
		{4, -5, "backward to the first slot: 0-4-1"},
		{5, 1, "no target: the offset as given"},
		{6, 0, "to the very next instruction"},
	} {
		if got := off(code, c.slot); got != c.want {
			t.Errorf("slot %d: offset %d, want %d (%s)", c.slot, got, c.want, c.why)
		}
	}
	if code[0] != OpMov64Imm || int32(binary.LittleEndian.Uint32(code[4:])) != -7 {
		t.Errorf("slot 0: % x", code[0:8])
	}
	if code[8*2+1] != 1|PseudoMapFD<<4 || binary.LittleEndian.Uint32(code[8*2+4:]) != 5 ||
		binary.LittleEndian.Uint32(code[8*3+4:]) != 9 || code[8*3] != 0 {
		t.Errorf("OpLdImm64: % x % x", code[16:24], code[24:32])
	}
	if code[8*7+1] != 7|9<<4 {
		t.Errorf("registers of slot 7: %#x, want dst 7 in the low nibble, src 9 in the high", code[8*7+1])
	}
}

// TestAssembleErrors: a missing label, a label given twice, a target on
// an instruction that does not jump, and a jump too far for 16 bits are
// refused with what and where.
func TestAssembleErrors(t *testing.T) {
	far := make([]Insn, 1<<15+2) // from slot 0 to slot 2^15+1: 2^15 slots, one too many
	for i := range far {
		far[i] = Insn{Op: OpMov64Imm}
	}
	far[0] = Insn{Op: OpJa, Target: "far"}
	far[len(far)-1] = Insn{Label: "far", Op: OpExit}
	for _, c := range []struct {
		name string
		prog []Insn
		want string
	}{
		{"missing", []Insn{{Op: OpJa, Target: "nowhere"}, {Op: OpExit}}, `no label "nowhere" (instruction 0)`},
		{"twice", []Insn{{Label: "a", Op: OpExit}, {Label: "a", Op: OpExit}}, `label "a" given twice (instruction 1)`},
		{"not a jump", []Insn{{Op: OpMov64Imm, Target: "x"}, {Label: "x", Op: OpExit}}, "does not jump"},
		{"call", []Insn{{Op: OpCall, Imm: 7, Target: "x"}, {Label: "x", Op: OpExit}}, "does not jump"},
		{"too far", far, "too far"},
	} {
		_, err := Assemble(c.prog)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := Assemble(far[1:]); err != nil {
		t.Errorf("a program without the far jump: %v", err)
	}
}

// reachable walks the assembled program's control flow from slot 0 and
// returns which slots it reaches, or the slot a jump leaves the program
// from.
func reachable(t *testing.T, code []byte) []bool {
	t.Helper()
	n := len(code) / 8
	seen := make([]bool, n)
	todo := []int{0}
	for len(todo) > 0 {
		s := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if s < 0 || s >= n {
			t.Fatalf("control flow leaves the program at slot %d", s)
		}
		if seen[s] {
			continue
		}
		seen[s] = true
		op := code[8*s]
		in := Insn{Op: op}
		switch {
		case op == OpExit:
		case op == OpLdImm64:
			seen[s+1] = true
			todo = append(todo, s+2)
		case op == OpJa:
			todo = append(todo, s+1+int(off(code, s)))
		case in.isJump():
			todo = append(todo, s+1, s+1+int(off(code, s)))
		default:
			todo = append(todo, s+1)
		}
	}
	return seen
}

// TestPortProgramsReachable: every variant of the port classifier
// assembles, and every instruction of it is reachable (the verifier
// refuses dead code) and no jump leaves it.
func TestPortProgramsReachable(t *testing.T) {
	for _, p := range []Port{{MTU: 1500}, {LossPercent: 1}, {MTU: 9000, LossPercent: 0.5}, {LossPercent: 100}, {MTU: 1500, LossPercent: 100}, {}} {
		code, err := Assemble(p.Program(3))
		if err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		for s, ok := range reachable(t, code) {
			if !ok {
				t.Errorf("%+v: slot %d (op %#x) is unreachable", p, s, code[8*s])
			}
		}
	}
}

// TestPortCheck: loss outside 0 and 0.001% to 100%, and a negative MTU,
// are refused; the drop threshold is the share of 2^32.
func TestPortCheck(t *testing.T) {
	for _, p := range []Port{{LossPercent: -1}, {LossPercent: 150}, {LossPercent: 0.0001}, {MTU: -1}} {
		if err := p.Check(); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
	for _, p := range []Port{{}, {LossPercent: 0.001}, {LossPercent: 100, MTU: 68}} {
		if err := p.Check(); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
	if th := (Port{LossPercent: 25}).lossThreshold(); th != 1<<30 {
		t.Errorf("25%%: threshold %d, want 2^30", th)
	}
	if (Port{}).Filters() || !(Port{LossPercent: 1}).Filters() || !(Port{MTU: 1500}).Filters() {
		t.Error("Filters: only a port with an MTU or a loss filters")
	}
}

// TestFilterName: what a port's tc filter is called reads back as the
// same Port, and names not ours are not read as one.
func TestFilterName(t *testing.T) {
	for _, p := range []Port{{MTU: 1500}, {LossPercent: 1}, {MTU: 9000, LossPercent: 0.5}, {LossPercent: 100}, {LossPercent: 0.001}} {
		got, ok := parseFilterName(filterName(p))
		if !ok || got != p {
			t.Errorf("%+v: named %q, read back as %+v (%v)", p, filterName(p), got, ok)
		}
	}
	for _, name := range []string{"", "mtu_", "mtu_x", "loss_1", "loss_150%", "mtu_1500_", "mtu_1500_rate_1", "other", "mtu_-1"} {
		if p, ok := parseFilterName(name); ok {
			t.Errorf("%q read as %+v", name, p)
		}
	}
}
