package awr

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// FuzzParse: any input gives a report or an error, never a panic, and
// what a report holds stays within the package's bounds.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"11.2.0.3-awrrpt-rac-mtu1500.txt", "11.2.0.4-awrrpt-rac.html", "12.2-awrrpt-rac.html", "19c-awrgrpt-rac.txt", "19c-awrgrpt-rac.html"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/3])
	}
	f.Add([]byte("WORKLOAD REPOSITORY report for\nInterconnect Ping Latency Stats\n---\n1 2 3 4 5 6 7\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := Parse(strings.NewReader(string(in)), "fuzz")
		if err != nil {
			return
		}
		if len(r.Instances) > maxInstances || len(r.Notes) > maxNotes {
			t.Fatalf("%d instances, %d notes", len(r.Instances), len(r.Notes))
		}
		for _, in := range r.Instances {
			if len(in.Waits) > maxWaits || len(in.Devices) > maxDevices || len(in.Pings) > maxInstances || len(in.Clients) > 16 {
				t.Fatalf("unbounded lists: %d waits %d devices %d pings", len(in.Waits), len(in.Devices), len(in.Pings))
			}
		}
		res := Analyze([]Report{*r})
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		// Output grows with what was read, never beyond a fixed budget.
		if len(b) > 4<<20 {
			t.Fatalf("%d bytes of JSON from %d bytes of input", len(b), len(in))
		}
	})
}

// TestHTML100MB reads a 100 MB HTML report in bounded memory: the file is
// written here (the header and summary, then 100 MB of SQL-statistics
// tables no parser keeps, then the cluster sections), read from disk, and
// the heap sampled every millisecond while it is parsed.
func TestHTML100MB(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads 100 MB")
	}
	src, err := os.ReadFile(filepath.Join("testdata", "11.2.0.4-awrrpt-rac.html"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	cut := strings.Index(s, `<h3 class="awr">Interconnect Ping Latency Stats</h3>`)
	name := filepath.Join(t.TempDir(), "big.html")
	fh, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(fh)
	w.WriteString(s[:cut])
	w.WriteString(`<h3 class="awr">SQL ordered by Elapsed Time</h3><table border="0" class="tdiff" summary="This table displays top SQL by elapsed time">`)
	const size = 100 << 20
	for n := 0; n < size; {
		k, _ := fmt.Fprintf(w, `<tr><td class="awrc">%d.5</td><td class="awrc">%d</td><td class="awrc"><a class="awr" href="#%013x">%013x</a></td><td class="awrc">SELECT /* %d */ col FROM t WHERE id = :1 &amp; x &lt; 2</td></tr>`+"\n", n, n%977, n, n, n)
		n += k
	}
	w.WriteString("</table>\n")
	w.WriteString(s[cut:])
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	fi, _ := os.Stat(name)

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
			}
		}
	}()
	in, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r, err := Parse(in, name)
	elapsed := time.Since(start)
	in.Close()
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	total := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d MB read in %v: peak HeapInuse %.1f MiB (%.1f MiB before), TotalAlloc %.0f MiB (%.2f bytes allocated per byte read)",
		fi.Size()>>20, elapsed.Round(time.Millisecond), float64(peak.Load())/(1<<20), float64(before.HeapInuse)/(1<<20), float64(total)/(1<<20), float64(total)/float64(fi.Size()))
	// The sections after the 100 MB were read: the whole file was.
	if len(r.Instances) != 1 || len(r.Instances[0].Pings) != 2 || len(r.Instances[0].Devices) != 1 || r.Instances[0].Remaster == nil {
		t.Fatalf("the sections after the big table were not read: %+v", r.Instances)
	}
	// Bounded: the heap never holds more than a small fraction of the
	// file (the tokenizer's buffer, the row being read, the report).
	if p := peak.Load(); p > before.HeapInuse+32<<20 {
		t.Errorf("peak HeapInuse %d MiB above the %d MiB before: not bounded", (p-before.HeapInuse)>>20, before.HeapInuse>>20)
	}
}
