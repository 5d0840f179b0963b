package traffic

import (
	"errors"
	"slices"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// The receive path with the reader awake. A software receive stamp is
// taken when the driver hands a datagram to the stack, so the time from it
// to the read returning holds more than the reader's wake-up: the stack's
// receive path above the driver (IP, reassembly, UDP, the socket queue)
// and the read's own copy and return to the program. That part is there
// whether the reader slept or not, and no idle setting changes it: in a
// lab node on a KVM guest here it was 2.7 us for an 8 KiB block and 2.3
// us for a 256-byte request, about 60 % of an end's stamp-to-read (4.2
// and 3.9 us) with the host's CPUs kept awake by a PM QoS hold.
//
// So each end measures it before its run, on loopback in its own network
// namespace and its own hot thread: a datagram of the size it will read
// sent to a socket of its own and read at once, with the same read and
// control data as its sampled reads, awakeSamples times; the median is its
// receive path awake. Its wake-ups are then what a read took beyond it,
// and the path counts in network and stacks. The awake read also enters
// the kernel, which a sleeping reader did before the stamp: the wake-ups
// are low by that much (an empty read here: 0.55 us).

// awakeSamples is how many datagrams measure the receive path awake
// (after awakeWarmup more that warm the path and are not counted).
const (
	awakeSamples = 63
	awakeWarmup  = 8
)

// errNoLoopback says the end's namespace has no loopback to measure on.
var errNoLoopback = errors.New("no loopback in this network namespace (127.0.0.1 unreachable)")

// receivePathAwake is the median time, ns, from the kernel's receive stamp
// of a size-byte datagram to the read returning with it, with the reader
// awake (see above), measured on loopback in the calling thread's network
// namespace.
func receivePathAwake(size int) (int64, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	if err := loopbackToSelf(fd, size); err != nil {
		return 0, err
	}
	c := &rawConn{fd: fd, timeout: sysTimeout}
	out := []ipv4.Message{{Buffers: [][]byte{make([]byte, size)}}}
	in := []ipv4.Message{{Buffers: [][]byte{make([]byte, size+1)}, OOB: make([]byte, oobLen)}}
	got := make([]int64, 0, awakeSamples)
	for i := 0; i < awakeSamples+awakeWarmup; i++ {
		if _, err := c.WriteBatch(out, 0); err != nil {
			return 0, err
		}
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		in[0].OOB = in[0].OOB[:oobLen]
		n, err := c.ReadBatch(in, unix.MSG_WAITFORONE)
		now := time.Now().UnixNano()
		if err != nil || n != 1 {
			return 0, errorf("a datagram sent to itself did not come back: %v", err)
		}
		at, ok := rxStamp(in[0].OOB[:in[0].NN])
		if !ok {
			return 0, errors.New("the kernel gave no receive stamp on loopback")
		}
		if i >= awakeWarmup && now >= at {
			got = append(got, now-at)
		}
	}
	if len(got) == 0 {
		return 0, errors.New("no datagram read after its stamp")
	}
	slices.Sort(got)
	return got[len(got)/2], nil
}

// loopbackToSelf binds fd to an ephemeral port of 127.0.0.1, connects it
// to itself, asks for receive stamps and makes its buffers hold a size-byte
// datagram.
func loopbackToSelf(fd, size int) error {
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		if errors.Is(err, unix.EADDRNOTAVAIL) {
			return errNoLoopback
		}
		return err
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return err
	}
	if err := unix.Connect(fd, sa); err != nil {
		if errors.Is(err, unix.ENETUNREACH) {
			return errNoLoopback
		}
		return err
	}
	for _, o := range []int{unix.SO_SNDBUF, unix.SO_RCVBUF} {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, o, 4*size+4096); err != nil {
			return err
		}
	}
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
}

// awake is an end's receive path awake, ns, or why it was not measured
// (both zero: the split is off).
type awake struct {
	ns  int64
	err string
}

// awakeFor measures the receive path awake of an end of a blocks run of
// spec that reads datagrams of size(spec normalized) bytes, before the end
// starts counting (its packets would count in the run's network counters
// and its CPU in the run's), on the calling thread, which is in the end's
// network namespace; nothing when spec has the split off or is invalid
// (the run says why).
func awakeFor(spec Spec, size func(Spec) int) awake {
	s, err := spec.Normalize()
	if err != nil || s.Mode != ModeBlocks || s.NoSplit {
		return awake{}
	}
	ns, err := receivePathAwake(size(s))
	if err != nil {
		return awake{err: err.Error()}
	}
	return awake{ns: ns}
}

// ReceivePathAwake is receivePathAwake for gc's nodes: the median time
// from the kernel's receive stamp of a size-byte datagram to the read
// returning with it with the reader awake, on loopback here.
func ReceivePathAwake(size int) (time.Duration, error) {
	ns, err := receivePathAwake(size)
	return time.Duration(ns), err
}
