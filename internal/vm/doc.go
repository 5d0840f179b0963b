// Package vm runs lab nodes that are virtual machines with a kernel of
// their own: qemu-system-x86_64 booting a Linux kernel (by default Debian's
// packaged one, fetched with apt-get download and unpacked into the cache,
// never installed on the host) with an initramfs this package builds from
// busybox-static, the kernel's virtio modules and the interlink binary.
//
// The guest's init (a busybox script) mounts /proc, /sys and /dev, loads
// the virtio modules in dependency order (read from each module's
// .modinfo), and runs `interlink lab guest`, which configures the guest's
// links from the node's configuration (matched by MAC address), starts the
// node's agent, prints Ready on the console and then serves commands on
// the second serial port (ttyS1): the host's end is a unix socket qemu
// listens on, spoken to by Exec with the frames of frame.go. It answers
// queries about its services (Services) there too, and on the third serial
// port (ttyS2, the status channel), which takes queries only, so that a
// long command does not keep them waiting (qemu serves each socket to one
// client at a time). The first serial port (ttyS0) is the kernel's
// console, kept in a file.
//
// The cache (CacheDir: /var/cache/interlink/vm, or $INTERLINK_VM_CACHE)
// holds the unpacked kernels and the result of the KVM probe; ClearCache
// removes it. Everything else a VM needs (its initramfs, console log and
// sockets) lives in a directory its caller owns (a lab's).
package vm
