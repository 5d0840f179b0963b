// Package nfs is a userspace NFSv3 client (ONC RPC over TCP, RFC 5531 and
// RFC 1813, with the portmapper and MOUNT) and, on top of it, an
// emulation of the Linux kernel client's RPC pattern under a set of mount
// options (FS, File): attribute revalidation with GETATTR as noac and
// actimeo=0 cause it, synchronous FILE_SYNC writes under noac and sync,
// O_DIRECT-like uncached writes at the application's size under
// forcedirectio, and write-behind with wsize UNSTABLE WRITEs and a COMMIT
// on close otherwise. It needs no kernel NFS client and no mount, like
// fio's libnfs engine.
//
// The XDR and RPC code is written here rather than taken from
// vmware/go-nfs-client or willscott/go-nfs: the emulation must choose every
// procedure and every WRITE's stable_how itself and count each call, which
// those clients decide internally (their writes and lookups are not the
// kernel's pattern), and the few procedures needed are a few hundred lines.
package nfs
