package traffic

import (
	"errors"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/kernel"
)

// sendLayout places a sender's datagrams in its sendmmsg messages. When a
// datagram fits the path MTU, each message carries up to segs datagrams
// back to back with a UDP_SEGMENT control message (UDP GSO, Linux 4.18):
// the kernel cuts them into datagrams of exactly len bytes, so the stack
// above the device runs once per message instead of once per datagram,
// which is what bounds a small-datagram rate. Larger datagrams (which IP
// fragments, the point of the exercise) go one per message, in batches
// whose fragments stay within one softirq budget.
type sendLayout struct {
	len, segs int
	ms        []ipv4.Message
	full      [][]byte
}

// gsoMaxSegs is UDP_MAX_SEGMENTS of older kernels.
const gsoMaxSegs = 64

// newSendLayout lays out datagrams of size bytes for a path of mtu (0: as
// if each needed fragments, one datagram per message); gso says whether
// datagrams that fit may be segmented (gsoAvailable).
func newSendLayout(size, mtu int, gso bool) *sendLayout {
	l := &sendLayout{len: size, segs: 1}
	msgs := batchFor(size)
	switch k := PacketsPerDatagram(size, mtu); {
	case k == 1 && gso:
		l.segs = min(gsoMaxSegs, MaxDatagram/size)
		msgs = max(1, min(8, batchBytes/(l.segs*size)))
	case k == 1:
		// One datagram per message, as many per call as a batch holds:
		// without segmentation offload the stack runs once per datagram
		// whatever the batching, so a larger batch only saves calls.
	case k > 1:
		// Keep a call's fragments within one softirq budget (64 packets
		// per NAPI poll): a larger burst leaves receive work to ksoftirqd
		// and overflows queues on the way.
		msgs = max(1, min(msgs, maxBatch/k))
	}
	l.ms = make([]ipv4.Message, msgs)
	l.full = make([][]byte, msgs)
	for i := range l.ms {
		l.full[i] = make([]byte, l.segs*size)
		l.ms[i].Buffers = [][]byte{l.full[i]}
		if l.segs > 1 {
			l.ms[i].OOB = gsoCmsg(size)
		}
	}
	return l
}

func (l *sendLayout) capacity() int { return len(l.ms) * l.segs }

// slot is the buffer of the i-th datagram of a batch.
func (l *sendLayout) slot(i int) []byte {
	m, j := i/l.segs, i%l.segs
	return l.full[m][j*l.len : (j+1)*l.len]
}

// fill sizes the messages for n datagrams and returns how many are used.
func (l *sendLayout) fill(n int) int {
	msgs := (n + l.segs - 1) / l.segs
	for m := 0; m < msgs; m++ {
		k := min(l.segs, n-m*l.segs)
		l.ms[m].Buffers[0] = l.full[m][:k*l.len]
	}
	return msgs
}

// datagrams is how many of n datagrams the first sent messages held.
func (l *sendLayout) datagrams(sent, n int) int { return min(sent*l.segs, n) }

// gsoLevel is the level of the UDP_SEGMENT control message. A test sets a
// level the kernel does not know (IPPROTO_TCP on a UDP socket): today's
// kernel then skips the message without a word, exactly as one before 4.18
// skips SOL_UDP (ip_cmsg_send ignores levels other than SOL_IP), and sends
// the whole buffer as one datagram.
var gsoLevel int32 = unix.SOL_UDP

func gsoCmsg(size int) []byte {
	b := make([]byte, unix.CmsgSpace(2))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = gsoLevel, unix.UDP_SEGMENT
	h.SetLen(unix.CmsgLen(2))
	*(*uint16)(unsafe.Pointer(&b[unix.CmsgLen(0)])) = uint16(size)
	return b
}

// gsoRefused reports an error that means UDP GSO is not available.
func gsoRefused(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EIO) || errors.Is(err, unix.ENOPROTOOPT) || errors.Is(err, unix.EOPNOTSUPP)
}

// gsoProbe asks the kernel whether it has UDP GSO (a seam: tests replace
// it to force the answer). It is called once per process (gsoKernel).
var gsoProbe = kernel.UDPGSO

var gsoOnce struct {
	sync.Once
	err error
}

// gsoKernel is the kernel's answer, asked once.
func gsoKernel() error {
	gsoOnce.Do(func() { gsoOnce.err = gsoProbe() })
	return gsoOnce.err
}

// gsoAvailable says whether a sender may use UDP GSO, and when not, why
// (for the result: the figures are then those of one send per datagram).
// The environment is read on every call so that one process can run with
// and without (bench/compare's direct engines).
func gsoAvailable() (bool, string) {
	if v := os.Getenv(NoGSOEnv); v != "" && v != "0" {
		return false, NoGSOEnv + " is set"
	}
	if err := gsoKernel(); err != nil {
		if errors.Is(err, unix.ENOPROTOOPT) {
			return false, "this kernel has no UDP segmentation offload (UDP_SEGMENT, Linux 4.18)"
		}
		return false, "UDP segmentation offload not usable: " + err.Error()
	}
	return true, ""
}
