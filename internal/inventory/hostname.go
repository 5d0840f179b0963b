package inventory

import (
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// hostnameFiles are where a node's hostname is read, in order: the
// kernel's, the one set at boot, Solaris's.
var hostnameFiles = []string{"/proc/sys/kernel/hostname", "/etc/hostname", "/etc/nodename"}

// hostnameFileMax bounds the read of a hostname file: a nodename is at
// most 64 bytes (__NEW_UTS_LEN) and /etc/hostname may carry comment lines,
// so a larger file is no hostname file and is not read whole.
const hostnameFileMax = 4096

// hostnameMax is the longest hostname the kernel holds (__NEW_UTS_LEN).
const hostnameMax = 64

// gatherHostname sets inv.Node.Hostname from the first hostname file that
// holds one; on a live node without any, the system's. A file that is
// there but holds no hostname (too large, binary, one long line) is not
// used, and the "node" section says so in one line rather than the
// report's header printing it.
func gatherHostname(src *Source, inv *Inventory) {
	var problems []string
	for _, p := range hostnameFiles {
		b, err := src.ReadFileMax(p, hostnameFileMax)
		if err != nil {
			if !isNotExist(err) {
				problems = append(problems, p+": "+errText(err))
			}
			continue
		}
		h, ok := parseHostname(string(b))
		if !ok {
			problems = append(problems, fmt.Sprintf("%s holds no hostname (binary, or longer than %d bytes): not used", p, hostnameMax))
			continue
		}
		if h != "" {
			inv.Node.Hostname = h
			break
		}
	}
	if inv.Node.Hostname == "" && src.Live() {
		inv.Node.Hostname, _ = os.Hostname()
	}
	if len(problems) > 0 {
		inv.addSection("node", "partial", "hostname: "+strings.Join(problems, "; "))
	}
}

// parseHostname returns the hostname a hostname file holds: its first
// line that is neither blank nor a comment, trimmed; "" when there is
// none. It is not ok when the file is binary (a NUL byte, which no
// nodename holds, or not UTF-8) or that line is longer than the kernel
// allows. Other bytes are kept, as every string of a tree is: the text
// report escapes control characters (termtext), the JSON keeps them.
func parseHostname(s string) (string, bool) {
	if strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
		return "", false
	}
	for l := range strings.SplitSeq(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if len(l) > hostnameMax {
			return "", false
		}
		return l, true
	}
	return "", true
}
