package ebpf

import (
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"
)

// bpfTestRun is the head of union bpf_attr for BPF_PROG_TEST_RUN.
type bpfTestRun struct {
	progFD, retval          uint32
	dataSizeIn, dataSizeOut uint32
	dataIn, dataOut         ptr
	repeat, duration        uint32
	ctxSizeIn, ctxSizeOut   uint32
	ctxIn, ctxOut           ptr
}

// TestRun runs the tc classifier prog repeat times (at least once) over
// frame, an Ethernet frame, in the kernel (BPF_PROG_TEST_RUN, Linux
// 4.12; gso_size in the context, 5.7), and returns its last verdict
// (0 TC_ACT_OK, 2 TC_ACT_SHOT). gsoSize, when not 0, makes the frame a
// GSO packet of segments with that much payload each. Nothing is sent
// anywhere; the program's maps count as for real traffic.
func TestRun(prog int, frame []byte, gsoSize, repeat int) (uint32, error) {
	// struct __sk_buff up to gso_size: every other field zero, as the
	// kernel requires of an input context.
	ctx := make([]byte, skbGSOSize+4)
	binary.NativeEndian.PutUint32(ctx[skbGSOSize:], uint32(gsoSize))
	attr := bpfTestRun{
		progFD: uint32(prog), dataSizeIn: uint32(len(frame)), dataIn: ptrTo(&frame[0]),
		repeat: uint32(max(repeat, 1)), ctxSizeIn: uint32(len(ctx)), ctxIn: ptrTo(&ctx[0]),
	}
	if _, err := bpf(unix.BPF_PROG_TEST_RUN, unsafe.Pointer(&attr), unsafe.Sizeof(attr)); err != nil {
		return 0, err
	}
	return attr.retval, nil
}
