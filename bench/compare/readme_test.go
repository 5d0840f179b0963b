package main

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"
)

func TestReadmeOutput(t *testing.T) {
	if os.Getenv("T5_README") == "" {
		t.Skip("set T5_README=1")
	}
	tok := t.TempDir() + "/tok"
	os.WriteFile(tok, []byte("t5-readme-token-0123456789abcdef\n"), 0o600)
	for _, c := range []struct {
		mtu  int
		rate string
		args []string
	}{
		{1500, "", []string{"--mode", "udp", "--rate", "500M", "--time", "3s"}},
		{9000, "100mbit", []string{"--mode", "udp", "--rate", "200M", "--time", "2s", "--json"}},
		{9000, "100mbit", []string{"--mode", "udp", "--rate", "200M", "--time", "2s"}},
	} {
		p, err := up("t5-readme", c.mtu, c.rate)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		ag, err := start(p.n2, &out, "/work/wt-bench/bin/interlink", "agent", "--listen", p.a2.String(), "--token-file", tok, "--max-rate", "10gbit")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		args := append([]string{"bench", p.a2.String(), "--token-file", "token"}, c.args...)
		b, err := runIn(p.n1, 30*time.Second, "/work/wt-bench/bin/interlink", append([]string{"bench", p.a2.String(), "--token-file", tok}, c.args...)...)
		fmt.Printf("MTU %d\n$ interlink %v\n%s%v\n", c.mtu, args, b, err)
		stop(ag)
		labDown("t5-readme")
	}
}
