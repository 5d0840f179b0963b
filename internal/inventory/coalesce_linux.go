package inventory

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// ethtoolCoalesce is struct ethtool_coalesce (linux/ethtool.h): 23 u32.
type ethtoolCoalesce struct {
	Cmd                      uint32
	RxCoalesceUsecs          uint32
	RxMaxCoalescedFrames     uint32
	RxCoalesceUsecsIRQ       uint32
	RxMaxCoalescedFramesIRQ  uint32
	TxCoalesceUsecs          uint32
	TxMaxCoalescedFrames     uint32
	TxCoalesceUsecsIRQ       uint32
	TxMaxCoalescedFramesIRQ  uint32
	StatsBlockCoalesceUsecs  uint32
	UseAdaptiveRxCoalesce    uint32
	UseAdaptiveTxCoalesce    uint32
	PktRateLow               uint32
	RxCoalesceUsecsLow       uint32
	RxMaxCoalescedFramesLow  uint32
	TxCoalesceUsecsLow       uint32
	TxMaxCoalescedFramesLow  uint32
	PktRateHigh              uint32
	RxCoalesceUsecsHigh      uint32
	RxMaxCoalescedFramesHigh uint32
	TxCoalesceUsecsHigh      uint32
	TxMaxCoalescedFramesHigh uint32
	RateSampleInterval       uint32
}

// ifreqData is struct ifreq with ifr_data: the name, then a pointer in
// the union, padded to the union's 24 bytes.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// getCoalesce asks the driver of interface name for its interrupt
// coalescing (SIOCETHTOOL ETHTOOL_GCOALESCE, what `ethtool -c` shows). A
// driver without it answers EOPNOTSUPP, returned as is.
func getCoalesce(name string) (*Coalesce, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	ec := &ethtoolCoalesce{Cmd: unix.ETHTOOL_GCOALESCE}
	var ifr ifreqData
	copy(ifr.name[:unix.IFNAMSIZ-1], name)
	ifr.data = unsafe.Pointer(ec)
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return nil, e
	}
	return &Coalesce{RxUsecs: ec.RxCoalesceUsecs, RxFrames: ec.RxMaxCoalescedFrames, AdaptiveRx: ec.UseAdaptiveRxCoalesce != 0,
		TxUsecs: ec.TxCoalesceUsecs, TxFrames: ec.TxMaxCoalescedFrames}, nil
}
