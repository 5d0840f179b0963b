// Package vm is the host's side of lab nodes that are virtual machines
// with a kernel of their own: qemu-system-x86_64 booting a Linux kernel
// (from package cache: by default Debian's packaged one, fetched with
// apt-get download and unpacked into the cache, never installed on the
// host) with an initramfs this package builds (WriteInitramfs) from
// busybox-static, the kernel's virtio modules and the interlink binary.
//
// The guest's init (a busybox script) mounts /proc, /sys and /dev, loads
// the virtio modules in dependency order, and runs `interlink lab guest`
// (package guest), which checks the boot's nonce on its kernel command
// line, configures the guest's links, starts its services, prints its
// ready line on the console and then serves commands on the second serial
// port (ttyS1): the host's end is a unix socket qemu listens on, spoken to
// by Exec with the frames of package channel. The guest answers queries
// about its services (Services) there too, and on the third serial port
// (ttyS2, the status channel), which takes queries only, so that a long
// command does not keep them waiting (qemu serves each socket to one
// client at a time). The first serial port (ttyS0) is the kernel's
// console, kept in a file.
//
// qemu never runs as root: Boot opens its taps and hands them over, and
// qemu runs as User inside its seccomp sandbox. Everything a VM needs
// besides its kernel (its initramfs, console log and sockets) lives in a
// directory its caller owns (a lab's); docs/vm-trust.md says who can
// reach what.
package vm
