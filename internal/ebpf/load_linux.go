package ebpf

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// bpf calls bpf(2) with attr, which must be a pointer to the head of
// union bpf_attr for cmd.
func bpf(cmd int, attr unsafe.Pointer, size uintptr) (int, error) {
	r, _, errno := unix.Syscall(unix.SYS_BPF, uintptr(cmd), uintptr(attr), size)
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

// Filter is a loaded port classifier: the program's fd and its counters
// map's fd. Close closes both; a tc filter that holds the program keeps
// both alive in the kernel.
type Filter struct {
	Prog, Map int
}

// Close closes the program and the map.
func (f *Filter) Close() error {
	err1, err2 := unix.Close(f.Prog), unix.Close(f.Map)
	if err1 != nil {
		return err1
	}
	return err2
}

// Load loads p's classifier (BPF_PROG_TYPE_SCHED_CLS) with a counters map
// of its own, named name in the kernel (at most 15 bytes; bpftool and
// `tc filter show` print it).
func Load(p Port, name string) (*Filter, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	m, err := createArray(numCounters)
	if err != nil {
		return nil, fmt.Errorf("create port counters map: %w", err)
	}
	prog, err := loadProg(p.Program(m), name)
	if err != nil {
		unix.Close(m)
		return nil, err
	}
	return &Filter{Prog: prog, Map: m}, nil
}

// bpfMapCreate is the head of union bpf_attr for BPF_MAP_CREATE.
type bpfMapCreate struct {
	mapType, keySize, valueSize, maxEntries, mapFlags uint32
}

// createArray creates an array map of n u64 values.
func createArray(n int) (int, error) {
	attr := bpfMapCreate{mapType: unix.BPF_MAP_TYPE_ARRAY, keySize: 4, valueSize: 8, maxEntries: uint32(n)}
	return bpf(unix.BPF_MAP_CREATE, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
}

// bpfProgLoad is the head of union bpf_attr for BPF_PROG_LOAD.
type bpfProgLoad struct {
	progType    uint32
	insnCnt     uint32
	insns       ptr
	license     ptr
	logLevel    uint32
	logSize     uint32
	logBuf      ptr
	kernVersion uint32
	progFlags   uint32
	progName    [16]byte
}

// loadProg assembles and loads a tc classifier and returns its fd. When
// the kernel refuses it, the error wraps the errno and carries the
// verifier's log (many lines).
func loadProg(prog []Insn, name string) (int, error) {
	code, err := Assemble(prog)
	if err != nil {
		return -1, err
	}
	license := []byte("GPL\x00")
	load := func(logBuf []byte) (int, error) {
		attr := bpfProgLoad{
			progType: unix.BPF_PROG_TYPE_SCHED_CLS,
			insnCnt:  uint32(len(code) / 8),
			insns:    ptrTo(&code[0]),
			license:  ptrTo(&license[0]),
		}
		if logBuf != nil {
			attr.logLevel, attr.logSize = 1, uint32(len(logBuf))
			attr.logBuf = ptrTo(&logBuf[0])
		}
		copy(attr.progName[:15], name)
		return bpf(unix.BPF_PROG_LOAD, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	}
	fd, err := load(nil)
	if err == nil {
		return fd, nil
	}
	// Load again with the verifier's log, which says what is wrong.
	logBuf := make([]byte, 64<<10)
	if fd, err2 := load(logBuf); err2 == nil {
		return fd, nil
	}
	return -1, fmt.Errorf("load port classifier: %w (%s)", err, strings.TrimSpace(unix.ByteSliceToString(logBuf)))
}

// bpfMapElem is the head of union bpf_attr for BPF_MAP_LOOKUP_ELEM.
type bpfMapElem struct {
	mapFD uint32
	_     uint32
	key   ptr
	value ptr
	flags uint64
}

// Counters reads the filter's counters.
func (f *Filter) Counters() (Counters, error) {
	return readCounters(f.Map)
}

func readCounters(m int) (Counters, error) {
	var v [numCounters]uint64
	for k := range uint32(numCounters) {
		var val [8]byte
		attr := bpfMapElem{mapFD: uint32(m), key: ptrTo(&k), value: ptrTo(&val)}
		_, err := bpf(unix.BPF_MAP_LOOKUP_ELEM, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
		if err != nil {
			return Counters{}, fmt.Errorf("read port counters: %w", err)
		}
		v[k] = binary.NativeEndian.Uint64(val[:])
	}
	return Counters{Frames: v[keyFrames], DroppedMTU: v[keyDroppedMTU], DroppedLoss: v[keyDroppedLoss]}, nil
}

// bpfGetID is the head of union bpf_attr for BPF_PROG_GET_FD_BY_ID and
// BPF_MAP_GET_FD_BY_ID.
type bpfGetID struct {
	id, nextID, openFlags uint32
}

// bpfInfo is the head of union bpf_attr for BPF_OBJ_GET_INFO_BY_FD.
type bpfInfo struct {
	fd, infoLen uint32
	info        ptr
}

// progInfo is the head of struct bpf_prog_info, up to map_ids.
type progInfo struct {
	_        uint32 // type
	id       uint32
	_        [8]byte   // tag
	_        [2]uint32 // jited_prog_len, xlated_prog_len
	_        [3]uint64 // jited_prog_insns, xlated_prog_insns, load_time
	_        uint32    // created_by_uid
	nrMapIDs uint32
	mapIDs   ptr
}

// CountersByID reads the counters of the classifier whose program id is
// id (what `tc filter show` and netlink's BpfFilter.Id give), through the
// one map it uses.
func CountersByID(id uint32) (Counters, error) {
	get := bpfGetID{id: id}
	prog, err := bpf(unix.BPF_PROG_GET_FD_BY_ID, unsafe.Pointer(&get), unsafe.Sizeof(get))
	if err != nil {
		return Counters{}, fmt.Errorf("port classifier %d: %w", id, err)
	}
	defer unix.Close(prog)
	var mapID uint32
	info := progInfo{nrMapIDs: 1, mapIDs: ptrTo(&mapID)}
	attr := bpfInfo{fd: uint32(prog), infoLen: uint32(unsafe.Sizeof(info)), info: ptrTo(&info)}
	_, err = bpf(unix.BPF_OBJ_GET_INFO_BY_FD, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	if err != nil {
		return Counters{}, fmt.Errorf("port classifier %d: %w", id, err)
	}
	if info.nrMapIDs != 1 {
		return Counters{}, fmt.Errorf("port classifier %d uses %d maps, not its counters alone", id, info.nrMapIDs)
	}
	get = bpfGetID{id: mapID}
	m, err := bpf(unix.BPF_MAP_GET_FD_BY_ID, unsafe.Pointer(&get), unsafe.Sizeof(get))
	if err != nil {
		return Counters{}, fmt.Errorf("port classifier %d: counters map %d: %w", id, mapID, err)
	}
	defer unix.Close(m)
	return readCounters(m)
}
