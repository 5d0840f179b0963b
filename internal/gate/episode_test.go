package gate

import (
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/interlink/interlink/internal/buftest"
)

// TestFullQueueOneEpisode: under a storm the queue fills again at each
// admission (one slot freed, one backlog connection accepted): that is
// one episode, counted once and logged once when it starts and once when
// the queue has drained to half, with how often accepting paused; it was
// a warning and an info line per admission, each counted as an episode.
func TestFullQueueOneEpisode(t *testing.T) {
	eachEngineParallel(t, func(t *testing.T, engine string) {
		u := newUpstream(t)
		// The storm waits in the queue and the kernel backlog behind a
		// slow rate until every client is connected; then a faster one
		// drains it, the backlog refilling the queue at each admission
		// (the storm's dials on a loaded machine outlasting admissions at
		// the fast rate made two episodes of one storm). The accepter
		// must still refill within one admission's 500 ms: two slots
		// freed while it sleeps end the episode, by design.
		slow := Limits{RatePerSec: 0.1, Burst: 1, Queue: 2, PerSource: 2}
		g, addr := startGate(t, engine, Route{Upstream: u.ln.Addr().String(), Limits: slow})
		var logs buftest.Buffer
		r := g.routes["db"]
		r.mu.Lock()
		r.log = slog.New(slog.NewTextHandler(&logs, nil))
		r.mu.Unlock()
		roundTrip(t, dialFrom(t, "127.0.0.1", addr), "x") // the one token
		const storm = 8
		for i := 0; i < storm; i++ {
			dialFrom(t, "127.0.0.1", addr)
		}
		waitFor(t, func() bool { return testutil.ToFloat64(g.m.fullEpisodes.WithLabelValues("db")) == 1 })
		fast := slow
		fast.RatePerSec = 2
		if err := g.Reload([]Route{{Name: "db", Listen: r.cfg.Listen, Upstream: u.ln.Addr().String(), Limits: fast}}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { return testutil.ToFloat64(g.m.admitted.WithLabelValues("db")) == storm+1 })
		waitFor(t, func() bool { return strings.Contains(logs.String(), "room again") })
		out := logs.String()
		if v := testutil.ToFloat64(g.m.fullEpisodes.WithLabelValues("db")); v != 1 {
			t.Errorf("queue_full_total %v after one storm, want 1\n%s", v, out)
		}
		if n, m := strings.Count(out, "queue full"), strings.Count(out, "room again"); n != 1 || m != 1 {
			t.Errorf("%d 'queue full' and %d 'room again' lines, want 1 each:\n%s", n, m, out)
		}
		if strings.Contains(out, "pauses=1 ") {
			t.Errorf("one pause in a storm of %d through a queue of 2:\n%s", storm, out)
		}
	})
}

// TestFullQueueEpisodeEndsWithoutAdmission: the queue empties by
// timeouts or abandons before the accepter wakes, and nothing is admitted
// after: the episode ends when accepting resumes, so that the next fill is
// counted and logged as a new one.
func TestFullQueueEpisodeEndsWithoutAdmission(t *testing.T) {
	var logs buftest.Buffer
	m := newMetrics(prometheus.NewRegistry())
	r := &route{cfg: Route{Name: "db", Limits: Limits{Queue: 2}}, q: newFairQueue(),
		m: m.route("db"), log: slog.New(slog.NewTextHandler(&logs, nil))}
	r.cond = sync.NewCond(&r.mu)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pauseAccept()
	r.roomMade() // the queue emptied while accepting was paused
	r.resumeAccept()
	r.pauseAccept()
	if v := testutil.ToFloat64(m.fullEpisodes.WithLabelValues("db")); v != 2 {
		t.Errorf("queue_full_total %v after two fills with an empty queue between, want 2\n%s", v, logs.String())
	}
	if n := strings.Count(logs.String(), "room again"); n != 1 {
		t.Errorf("%d 'room again' lines, want 1:\n%s", n, logs.String())
	}
}
