package report

import (
	"strings"

	"github.com/interlink/interlink/internal/pmqos"
)

// cpuLatencyBlock shows which ends held a PM QoS CPU latency request for
// the run, as the text does; nothing when none was asked for.
func cpuLatencyBlock(s *section, r *pmqos.Report) {
	if r == nil {
		return
	}
	l := r.Lines()
	s.heading("Host CPU latency hold")
	s.para("%s", l[0])
	for i := range l[1:] {
		l[i+1] = strings.TrimSpace(l[i+1])
	}
	s.list(l[1:])
}
