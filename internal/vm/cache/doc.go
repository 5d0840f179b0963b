// Package cache keeps what VM lab nodes boot, between labs, in a directory
// root must be able to trust (Dir: /var/cache/interlink/vm, or
// $INTERLINK_VM_CACHE, refused unless every directory on its path is
// root's alone, as ssh's StrictModes): Debian's kernel package unpacked
// (DebianKernel: the image and the virtio modules, recorded with the
// package's SHA-256 in kernel.json, whose paths stay inside their
// directory), the sshd a guest runs (DebianSSHD), and facts about kernel
// images and module trees (CheckImage, ImageRelease, ModuleOrder).
package cache
