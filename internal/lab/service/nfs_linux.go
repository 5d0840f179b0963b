package service

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrMissing is returned when nfs-ganesha or rpcbind is not installed.
var ErrMissing = errors.New("nfs-ganesha not installed: apt-get install -y nfs-ganesha nfs-ganesha-vfs rpcbind")

// NFSServer is nfs-ganesha exporting Dir/export over NFSv3 (TCP) from a
// lab node. Stop it with Stop.
type NFSServer struct {
	Node   Node
	Addr   netip.Addr // the node's address clients use
	Dir    string     // ganesha.conf, ganesha.log, pid files, recovery
	Export string     // the exported directory (Dir/export)
	Path   string     // the export path clients mount (the same)
	PID    int        // ganesha.nfsd (its parent is a shell that also runs rpcbind)
	cmd    *exec.Cmd
	done   chan struct{}
}

// NFS ports: fixed, so no client needs the portmapper but it is there.
const (
	NFSPort   = 2049
	MountPort = 20048
)

// NFSOption changes how StartNFS runs the server.
type NFSOption int

// NFSDetached starts the server to outlive the calling process (a lab
// service, stopped by lab down): no parent-death signal, its own session.
// Without it the server ends with the caller (tests).
const NFSDetached NFSOption = 1

// NFSInstalled says whether nfs-ganesha, its VFS backend and rpcbind are
// installed, or returns ErrMissing.
func NFSInstalled() error {
	_, _, err := nfsBinaries()
	return err
}

func nfsBinaries() (ganesha, rpcbind string, err error) {
	if ganesha, err = exec.LookPath("ganesha.nfsd"); err != nil {
		return "", "", ErrMissing
	}
	if rpcbind, err = exec.LookPath("rpcbind"); err != nil {
		return "", "", ErrMissing
	}
	if m, _ := filepath.Glob("/usr/lib/*/ganesha/libfsalvfs.so"); len(m) == 0 {
		return "", "", ErrMissing
	}
	return ganesha, rpcbind, nil
}

// NFSExport is the directory a server started in dir exports (and the
// export path clients mount).
func NFSExport(dir string) string { return filepath.Join(dir, "export") }

// NFSLog is ganesha's log of a server started in dir.
func NFSLog(dir string) string { return filepath.Join(dir, "ganesha.log") }

// StartNFS starts rpcbind and ganesha in node n, serving dir/export to
// addr's network, and waits until the NFS port answers. dir must exist and
// be empty (a t.TempDir); Stop leaves it for the caller to remove.
func StartNFS(ctx context.Context, n Node, addr netip.Addr, dir string, opts ...NFSOption) (*NFSServer, error) {
	ganesha, rpcbind, err := nfsBinaries()
	if err != nil {
		return nil, err
	}
	detached := false
	for _, o := range opts {
		detached = detached || o == NFSDetached
	}
	s := &NFSServer{Node: n, Addr: addr, Dir: dir, Export: NFSExport(dir), done: make(chan struct{})}
	s.Path = s.Export
	for _, d := range []string{s.Export, filepath.Join(dir, "recovery")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "ganesha.conf"), []byte(s.config()), 0o644); err != nil {
		return nil, err
	}
	// One shell in the node: a private /run for rpcbind's socket, then
	// rpcbind and ganesha as its children (PIDs recorded); the shell waits
	// for both and so reaps them, and ends when both have ended.
	script := `set -e
case "$2" in /run/*)
  # dir lives under /run (a lab's state directory): keep it reachable at
  # the same path inside the private /run.
  d=$(mktemp -d /tmp/interlink-nfs.XXXXXX)
  mount --bind "$2" "$d"
  mount -t tmpfs -o mode=0755,size=4m interlink-nfs-run /run
  mkdir -p "$2"
  mount --bind "$d" "$2"
  umount "$d"; rmdir "$d";;
*)
  mount -t tmpfs -o mode=0755,size=4m interlink-nfs-run /run;;
esac
mkdir -p /run/rpcbind
chown _rpc /run/rpcbind 2>/dev/null || true
"$1" -f & echo $! > "$2/rpcbind.pid"
i=0; while [ ! -S /run/rpcbind.sock ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
"$3" -F -f "$2/ganesha.conf" -L "$2/ganesha.log" -p "$2/ganesha.pid" -N NIV_EVENT & echo $! > "$2/ganesha.spid"
wait`
	s.cmd = exec.Command("/bin/sh", "-c", script, "nfs-service", rpcbind, dir, ganesha)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if detached {
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := n.Start(s.cmd); err != nil {
		return nil, fmt.Errorf("nfs server on %s: %w", n.Name(), err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	if err := s.wait(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *NFSServer) config() string {
	return fmt.Sprintf(`NFS_CORE_PARAM {
	Protocols = 3;
	NFS_Port = %d;
	MNT_Port = %d;
	Enable_NLM = false;
	Enable_RQUOTA = false;
}
NFSV4 {
	RecoveryRoot = "%s/recovery";
	Graceless = true;
}
EXPORT {
	Export_Id = 1;
	Path = "%s";
	Pseudo = "/export";
	Access_Type = RW;
	Squash = No_Root_Squash;
	Protocols = 3;
	Transports = TCP;
	SecType = sys;
	FSAL { Name = VFS; }
}
`, NFSPort, MountPort, s.Dir, s.Export)
}

// wait polls the NFS port from inside the node until it accepts.
func (s *NFSServer) wait(ctx context.Context) error {
	deadline := time.Now().Add(20 * time.Second)
	target := net.JoinHostPort(s.Addr.String(), strconv.Itoa(NFSPort))
	for {
		var err error
		derr := s.Node.Do(func() error {
			c, e := net.DialTimeout("tcp", target, 500*time.Millisecond)
			if e == nil {
				c.Close()
				// ganesha listens before it has registered MOUNT with
				// rpcbind: ready when the portmapper knows it.
				e = registered(s.Addr, 100005, 3)
			}
			err = e
			return nil
		})
		if derr != nil {
			return derr
		}
		if err == nil {
			s.PID, _ = s.pid("ganesha.spid", "ganesha.nfsd")
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("nfs server on %s exited at start: %s", s.Node.Name(), s.logTail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nfs server on %s: %s not accepting after 20 s: %s", s.Node.Name(), target, s.logTail())
		}
	}
}

// registered asks the portmapper at addr (PMAPPROC_GETPORT over TCP,
// RFC 1833) whether prog/vers is registered for TCP.
func registered(addr netip.Addr, prog, vers uint32) error {
	c, err := net.DialTimeout("tcp", net.JoinHostPort(addr.String(), "111"), 500*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	// record mark, xid, CALL, rpcvers 2, PMAP 100000 v2, GETPORT, AUTH_NONE x2, args
	call := []uint32{0x80000038, 1, 0, 2, 100000, 2, 3, 0, 0, 0, 0, prog, vers, 6, 0}
	b := make([]byte, 0, 4*len(call))
	for _, v := range call {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	if _, err := c.Write(b); err != nil {
		return err
	}
	r := make([]byte, 32)
	if _, err := io.ReadFull(c, r); err != nil {
		return err
	}
	// mark xid REPLY MSG_ACCEPTED verf(flavor, len 0) SUCCESS port
	if port := binary.BigEndian.Uint32(r[28:]); binary.BigEndian.Uint32(r[24:]) != 0 || port == 0 {
		return fmt.Errorf("program %d version %d not registered yet", prog, vers)
	}
	return nil
}

// logTail is the last lines of ganesha's log that say what went wrong.
func (s *NFSServer) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "ganesha.log"))
	var bad []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, ":FATAL :") || strings.Contains(l, ":CRIT :Config") || strings.Contains(l, ":MAJ :") {
			bad = append(bad, l)
		}
	}
	if len(bad) > 3 {
		bad = bad[len(bad)-3:]
	}
	if len(bad) == 0 {
		return "see " + filepath.Join(s.Dir, "ganesha.log")
	}
	return strings.Join(bad, "; ")
}

// Stop ends ganesha and rpcbind by their PIDs (SIGTERM, then SIGKILL
// after 5 s) and waits for the shell that reaps them.
func (s *NFSServer) Stop() error {
	var errs []error
	for _, p := range []struct{ file, comm string }{{"ganesha.spid", "ganesha.nfsd"}, {"rpcbind.pid", "rpcbind"}} {
		pid, ok := s.pid(p.file, p.comm)
		if !ok {
			continue
		}
		syscall.Kill(pid, syscall.SIGTERM)
		if !waitGone(pid, p.comm, 5*time.Second) {
			syscall.Kill(pid, syscall.SIGKILL)
			if !waitGone(pid, p.comm, 2*time.Second) {
				errs = append(errs, fmt.Errorf("%s %d did not exit", p.comm, pid))
			}
		}
	}
	if s.cmd != nil && s.cmd.Process != nil {
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
		}
	}
	return errors.Join(errs...)
}

// pid reads a PID file of ours and checks that the process still is comm
// (not a reused PID) before anyone signals it.
func (s *NFSServer) pid(file, comm string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(s.Dir, file))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 || !isComm(pid, comm) {
		return 0, false
	}
	return pid, true
}

func isComm(pid int, comm string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return err == nil && strings.TrimSpace(string(b)) == comm
}

// waitGone waits until pid has exited (a zombie no init reaps counts as
// exited: it holds no socket and no file).
func waitGone(pid int, comm string, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || !isComm(pid, comm) {
			return true
		}
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && i+2 < len(b) && b[i+2] == 'Z' {
			return true
		}
	}
	return false
}
