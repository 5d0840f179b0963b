package inventory

// Mount is one NFS mount (or fstab entry) with its options.
type Mount struct {
	Device     string `json:"device"` // server:/export
	MountPoint string `json:"mount_point"`
	FSType     string `json:"fstype"`
}

func gatherNFS(src *Source, inv *Inventory) {}
