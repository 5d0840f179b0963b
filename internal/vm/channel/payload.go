package channel

import (
	"encoding/json"
	"fmt"

	"github.com/interlink/interlink/internal/lab/topology"
)

// Version is the channel protocol this binary speaks: what a guest says in
// its Hello. Version 0 is a guest from before the hello (it ignores one);
// bump Version when a frame type or a payload changes meaning.
const Version = 1

// Frame types. Each call (a command or a query) carries an id of its own,
// chosen by the host; the guest's frames for it carry the same id.
const (
	Hello   = 'H' // both ways: JSON HelloBody; the guest answers with its own
	Request = 'R' // host -> guest: JSON Command, starts a command
	Signal  = 'K' // host -> guest: one byte, a signal for the command
	Stdout  = 'O' // guest -> host: output
	Stderr  = 'E' // guest -> host: error output
	Exit    = 'X' // guest -> host: JSON ExitBody, the command's last frame
	Query   = 'Q' // host -> guest: JSON []ServiceProbe, asks about its services
	Answer  = 'A' // guest -> host: JSON []ServiceAnswer, the query's only frame
)

// HelloBody is a Hello frame's payload: the protocol the sender speaks.
type HelloBody struct {
	Version int `json:"version"`
}

// Command is a command the host asks the guest to run (a Request frame).
type Command struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env,omitempty"` // added to the guest's environment
}

// ExitBody is how a command ended (an Exit frame): its exit code (128+N
// when killed by signal N), or Error when it could not start (Code is 127
// then).
type ExitBody struct {
	Code  int    `json:"code"`
	Error string `json:"error,omitempty"`
}

// The services a guest starts: the service kinds of a topology, whose
// names the lab asks about (ServiceProbe.Kind).
const (
	ServiceAgent = topology.KindAgent // interlink agent
	ServiceSSHD  = topology.KindSSHD  // OpenSSH's sshd on port 22
)

// ServiceProbe asks the guest about one of its services: whether the
// process it started lives, and whether something answers a TCP connect
// to Address (host:port, dialled from inside the guest).
type ServiceProbe struct {
	Kind    string `json:"kind"` // ServiceAgent or ServiceSSHD
	Address string `json:"address"`
}

// ServiceAnswer is the guest's answer for one ServiceProbe.
type ServiceAnswer struct {
	Kind string `json:"kind"`
	// PID is the service's process in the guest, as started; 0 when the
	// guest did not start this kind.
	PID int `json:"pid,omitempty"`
	// Alive: the process has not exited. Listening: a connect to the
	// probe's Address was taken (only tried while Alive).
	Alive     bool `json:"alive"`
	Listening bool `json:"listening"`
	// Error is why the connect failed, or that the guest did not start
	// the service at all.
	Error string `json:"error,omitempty"`
}

// JSON returns a frame of type typ for call id whose payload is body as
// JSON (the payloads above cannot fail to marshal).
func JSON(typ byte, id uint32, body any) (Frame, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return Frame{}, fmt.Errorf("vm channel: %w", err)
	}
	return Frame{Type: typ, ID: id, Payload: b}, nil
}
