package guest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/vm/channel"
)

// cmdlinePath is the kernel's command line (a var for tests).
var cmdlinePath = "/proc/cmdline"

// Run is the guest's side, run by the initramfs's init as `interlink lab
// guest CONFIG`. It first checks that the kernel's command line carries
// the nonce the host recorded in the configuration (ErrNotGuest when not:
// on a host it changes nothing and opens no serial port); then it
// configures the links and routes of the node, starts its services,
// prints ReadyLine on console and serves commands on ChannelDevice and
// status queries on StatusDevice until ctx ends.
func Run(ctx context.Context, configPath string, console io.Writer) error {
	cmdline, err := os.ReadFile(cmdlinePath)
	if err != nil || !strings.Contains(string(cmdline), NonceParam+"=") {
		return ErrNotGuest
	}
	data, err := os.ReadFile(configPath)
	if err != nil {
		return fmt.Errorf("guest: %w", err)
	}
	var cfg Config
	if err := json.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("guest: %s: %w", configPath, err)
	}
	if err := CheckNonce(string(cmdline), cfg.Nonce); err != nil {
		return err
	}
	if err := configure(&cfg); err != nil {
		return fmt.Errorf("guest: %w", err)
	}
	svcs := NewServices()
	if cfg.AgentPort != 0 {
		if err := startAgent(ctx, &cfg, svcs); err != nil {
			return fmt.Errorf("guest: %w", err)
		}
	}
	if cfg.SSHD != nil {
		if err := startSSHD(ctx, svcs); err != nil {
			return fmt.Errorf("guest: %w", err)
		}
	}
	ch, err := openChannel(ChannelDevice)
	if err != nil {
		return fmt.Errorf("guest: %w", err)
	}
	defer ch.Close()
	if st, err := openChannel(StatusDevice); err != nil {
		fmt.Fprintf(console, "interlink-guest: no status port (%v): lab status asks on the command channel\n", err)
	} else {
		defer st.Close()
		go NewServer(nil, svcs, true).Serve(ctx, st)
		fmt.Fprintln(console, StatusLine)
	}
	up, _ := os.ReadFile("/proc/uptime")
	fmt.Fprintf(console, "%s at %s s\n", ReadyLine, strings.Fields(string(up) + " ?")[0])
	// INTERLINK_LAB and INTERLINK_NODE come with each request (the lab
	// sets a node's environment in one place, whatever its kind).
	return NewServer(nil, svcs, false).Serve(ctx, ch)
}

// startAgent starts `interlink agent` in a session of its own and waits
// until it answers on loopback (20 s: a guest in software emulation is
// slow to start a 40 MB binary), tracked in svcs.
func startAgent(ctx context.Context, cfg *Config, svcs *Services) error {
	if err := os.MkdirAll("/run/interlink", 0o700); err != nil {
		return err
	}
	token := "/run/interlink/agent.token"
	if err := os.WriteFile(token, []byte(cfg.AgentToken), 0o600); err != nil {
		return err
	}
	log, err := os.Create("/run/interlink/agent.log")
	if err != nil {
		return err
	}
	defer log.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	port := strconv.Itoa(cfg.AgentPort)
	cmd := exec.Command(self, "agent", "--listen", "0.0.0.0:"+port, "--token-file", token)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	svcs.Track(channel.ServiceAgent, cmd)
	return waitPort(ctx, "agent", port)
}

// startSSHD starts sshd in the foreground of a session of its own and
// waits until it answers on port 22; tracked in svcs.
func startSSHD(ctx context.Context, svcs *Services) error {
	for _, d := range []string{"/run/sshd", "/run/interlink"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	log, err := os.Create("/run/interlink/sshd.log")
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(SSHDPath, "-D", "-e", "-f", "/etc/ssh/sshd_config")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("sshd: %w", err)
	}
	svcs.Track(channel.ServiceSSHD, cmd)
	return waitPort(ctx, "sshd", "22")
}

// waitPort waits until something answers on loopback at port, 20 s at
// most (a guest in software emulation is slow to start a program).
func waitPort(ctx context.Context, what, port string) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s: no answer on port %s within 20s: %w", what, port, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// openChannel opens the serial port raw (cfmakeraw): 8 bits, no echo, no
// line editing, no translation.
func openChannel(dev string) (*os.File, error) {
	f, err := os.OpenFile(dev, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("channel: %w", err)
	}
	t, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("channel %s: %w", dev, err)
	}
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON | unix.IXOFF
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB | unix.CBAUD
	t.Cflag |= unix.CS8 | unix.CLOCAL | unix.CREAD | unix.B115200
	t.Ispeed, t.Ospeed = unix.B115200, unix.B115200
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, t); err != nil {
		f.Close()
		return nil, fmt.Errorf("channel %s: %w", dev, err)
	}
	return f, nil
}
