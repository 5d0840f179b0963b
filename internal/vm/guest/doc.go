// Package guest is the guest's side of a VM lab node, run by the
// initramfs's init as `interlink lab guest CONFIG` (Run): it checks that it
// runs in the VM the host booted (the nonce on the kernel command line),
// configures the node's links, starts its services, and serves the host's
// commands and queries on the serial ports (the channel package's frames).
// Config, the paths inside the guest and the console lines are the
// contract the host side (package vm) writes and reads.
package guest
