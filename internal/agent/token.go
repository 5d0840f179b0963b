package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"

	"github.com/interlink/interlink/internal/readfile"
	"github.com/interlink/interlink/internal/shellq"
)

// MinTokenLen is the shortest token accepted: the handshake can be
// observed, so a short token could be guessed offline.
const MinTokenLen = 16

// ErrToken marks a token file that is unusable (mode, content).
var ErrToken = errors.New("bad token file")

// ReadToken reads the shared token from path: the file's content without
// surrounding white space. It refuses a file that others can read (the
// token is a secret), an empty file and a token shorter than MinTokenLen.
func ReadToken(path string) ([]byte, error) {
	// readfile.Open refuses a FIFO or device unopened: os.Open of a
	// FIFO blocks until a writer comes, and SIGTERM cannot end it.
	f, err := readfile.Open(path)
	if errors.Is(err, readfile.ErrNotRegular) {
		return nil, fmt.Errorf("token file %v: %w", err, ErrToken)
	}
	if errors.Is(err, fs.ErrNotExist) {
		// The agent and its clients need the same file: say how to make
		// one, readable by its owner only (ReadToken refuses others).
		return nil, fmt.Errorf("token file %s: no such file; create one with: %s, and copy it to every node", path, makeToken(path))
	}
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	if st.Mode().Perm()&0o004 != 0 {
		// The command comes last, so nothing else sticks to its words.
		return nil, fmt.Errorf("token file %s: readable by everyone (mode %04o): %w; run: chmod 600 %s", path, st.Mode().Perm(), ErrToken, shellq.Quote(path))
	}
	if st.Size() > 4096 {
		return nil, fmt.Errorf("token file %s: %d bytes, a token is at most 4096: %w", path, st.Size(), ErrToken)
	}
	b := make([]byte, 4097)
	n, _ := f.Read(b)
	tok := bytes.TrimSpace(b[:n])
	if len(tok) == 0 {
		return nil, fmt.Errorf("token file %s: empty: %w; create one with: %s", path, ErrToken, makeToken(path))
	}
	if len(tok) < MinTokenLen {
		return nil, fmt.Errorf("token file %s: token is %d bytes, need at least %d: %w", path, len(tok), MinTokenLen, ErrToken)
	}
	return tok, nil
}

// makeToken is the shell command that writes a new token to path, mode 600.
func makeToken(path string) string {
	return "(umask 077; head -c 32 /dev/urandom | base64 > " + shellq.Quote(path) + ")"
}
