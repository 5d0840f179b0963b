package agent

import (
	"context"
	"encoding/json"

	"github.com/interlink/interlink/internal/wire"
)

// Info is the answer to "agent.info": what the agent is and grants, and the
// client's address as the agent sees it.
type Info struct {
	Agent   string      `json:"agent"`
	Version int         `json:"protocol_version"`
	Kinds   []string    `json:"kinds"`
	Limits  wire.Limits `json:"limits"`
	Peer    string      `json:"peer"`
	Local   string      `json:"local"`
}

func init() { Register("agent.info", serveInfo) }

func serveInfo(ctx context.Context, s *Session, _ json.RawMessage) (any, error) {
	return Info{Agent: s.srv.cfg.Software, Version: wire.Version, Kinds: Kinds(), Limits: s.Limits,
		Peer: s.Peer().String(), Local: s.LocalAddr().String()}, nil
}
