package db

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// recorder collects latencies and counts from all clients; one mutex is
// cheap next to a database round trip.
type recorder struct {
	mu        sync.Mutex
	total     *hdrhistogram.Histogram // microseconds
	interval  *hdrhistogram.Histogram
	committed int64
	ivTx      int64
	ivFailed  int64
	ivRetries int64
	failed    Failed
	retries   int64
	cancelled int64
}

// Histogram range: 1 us to 1 h, 3 significant digits.
const histMaxUs = int64(time.Hour / time.Microsecond)

func newRecorder() *recorder {
	return &recorder{total: hdrhistogram.New(1, histMaxUs, 3), interval: hdrhistogram.New(1, histMaxUs, 3)}
}

func (r *recorder) commit(d time.Duration) {
	us := min(max(int64(d/time.Microsecond), 1), histMaxUs)
	r.mu.Lock()
	r.total.RecordValue(us)
	r.interval.RecordValue(us)
	r.committed++
	r.ivTx++
	r.mu.Unlock()
}

func (r *recorder) fail(reason int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ivFailed++
	f := &r.failed
	f.Total++
	switch reason {
	case reasonSerialization:
		f.Serialization++
	case reasonDeadlock:
		f.Deadlock++
	case reasonConnection:
		f.ConnectionLost++
	default:
		f.Other++
	}
	f.LastError = cleanErr(err)
}

// retry counts a transaction tried again after a conflict.
func (r *recorder) retry() {
	r.mu.Lock()
	r.retries++
	r.ivRetries++
	r.mu.Unlock()
}

func (r *recorder) cancel() {
	r.mu.Lock()
	r.cancelled++
	r.mu.Unlock()
}
