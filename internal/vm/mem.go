package vm

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MemAvailable reads MemAvailable from a /proc/meminfo, in bytes.
func MemAvailable(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("meminfo: MemAvailable %q: %w", f[1], err)
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("meminfo: %w", err)
	}
	return 0, fmt.Errorf("meminfo: no MemAvailable line (kernel older than 3.14)")
}
