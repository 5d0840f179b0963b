//go:build !linux

package inventory

// getCoalesce needs SIOCETHTOOL, which only Linux has.
func getCoalesce(string) (*Coalesce, error) { return nil, errNoEthtool }
