package doctest

import (
	"slices"
	"testing"
)

func TestMatchOutput(t *testing.T) {
	printed := "a\nb 2026-11-21T17:59:48Z\nc\nd\ne\n"
	for _, tc := range []struct {
		shown []string
		ok    bool
	}{
		{[]string{"a", "b 2020-01-01T00:00:00Z", "c", "d", "e"}, true},
		{[]string{"a", "...", "e"}, true},
		{[]string{"...", "c", "  ... (2 more)"}, true},
		{[]string{"a", "b", "c", "d", "e"}, false},
		{[]string{"a", "...", "x"}, false},
		{[]string{"a", "c", "...", "e"}, false},
	} {
		if err := MatchOutput(tc.shown, printed); (err == nil) != tc.ok {
			t.Errorf("%q: %v, want ok=%v", tc.shown, err, tc.ok)
		}
	}
}

func TestSimpleCommands(t *testing.T) {
	for in, want := range map[string][][]string{
		`sudo interlink lab up jumbo`:                                {{"interlink", "lab", "up", "jumbo"}},
		`PGPASSWORD=x interlink storm a --clients 3 2>&1 | tee log`:  {{"interlink", "storm", "a", "--clients", "3"}, {"tee", "log"}},
		`(umask 077; head -c 32 /dev/urandom | base64 > /etc/t)`:     {{"umask", "077"}, {"head", "-c", "32", "/dev/urandom"}, {"base64"}},
		`interlink ab --a "x --json" --metric 'tps=tps = ([0-9.]+)'`: {{"interlink", "ab", "--a", "x --json", "--metric", "tps=tps = ([0-9.]+)"}},
		`interlink mesh $NODES --token-file "$T" # comment`:          {{"interlink", "mesh", "$NODES", "--token-file", "$T"}},
		`cat > nodes <<'END'`:                                        {{"cat"}},
		`for i in $(seq 1 3); do interlink x; done`:                  {{"for", "i", "in", "$(seq 1 3)"}, {"do", "interlink", "x"}, {"done"}},
	} {
		got, err := SimpleCommands(in)
		if err != nil || !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%s: %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestCommandsOfBlocks(t *testing.T) {
	text := "<!-- doctest: lab -->\n```sh\n# a comment\ncat > f <<'END'\nx y\nEND\ninterlink mesh --nodes f \\\n    --expect 9000\n```\n\n" +
		"```console\n$ interlink check\nout 1\n$ echo $?\n0\n```\n"
	bs := Blocks("p.md", text)
	if len(bs) != 2 || bs[0].Marker != "lab" || bs[1].Marker != "" {
		t.Fatalf("blocks %+v", bs)
	}
	cs := bs[0].Commands()
	if len(cs) != 2 || cs[0].Script() != "cat > f <<'END'\nx y\nEND" || cs[1].Text != "interlink mesh --nodes f  --expect 9000" || cs[1].Line != 7 {
		t.Errorf("sh commands %+v", cs)
	}
	cs = bs[1].Commands()
	if len(cs) != 2 || cs[0].Text != "interlink check" || !slices.Equal(cs[0].Out, []string{"out 1"}) || cs[0].OutLine != 13 || !slices.Equal(cs[1].Out, []string{"0"}) {
		t.Errorf("console commands %+v", cs)
	}
}

// TestCheckCommand proves the checker refuses what a stale page would
// hold, and takes what a good one holds.
func TestCheckCommand(t *testing.T) {
	for _, bad := range []string{
		"pmtu 198.18.10.2 --tiem 3s",                   // no such flag
		"bench 198.18.10.2 --time soon",                // a duration that does not parse
		"bench 198.18.10.2 --len 8Q",                   // a size that does not parse
		"agent --listen :7471 --max-rate fast",         // a rate that does not parse
		"lab upp jumbo",                                // no such command
		"storage bogus",                                // no such subcommand of a group
		"lab up",                                       // a missing argument
		"lab exec demo node1 -- interlink mesh --nope", // nested in lab exec
		"ab --a-prepare 'interlink lab set x ic mtu=1500' --b 'true' --a 'interlink bench --bogus'", // nested in ab
	} {
		words, err := SimpleCommands("interlink " + bad)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckCommand(words[0][1:]); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	for _, good := range []string{
		"pmtu 198.18.10.2 --token-file /etc/interlink/token --expect 9000",
		"lab exec demo node1 -- interlink bench 198.18.10.2 --mode blocks --time 3s --token-file t",
		`ab --runs 6 --a-prepare 'interlink lab set abx ic mtu=1500' -- interlink lab exec abx node1 -- interlink bench 198.18.10.2`,
		"agent --listen 192.168.10.1 --token-file /etc/interlink/token --max-rate auto",
		"bench --help",
	} {
		words, _ := SimpleCommands("interlink " + good)
		if err := CheckCommand(words[0][1:]); err != nil {
			t.Errorf("%s: %v", good, err)
		}
	}
}

func TestAnchors(t *testing.T) {
	a := Anchors("# `interlink lab demo`\n```\n# not a heading\n```\n## Prove the paths: `pmtu --storage`\n## x\n## x\n")
	for _, want := range []string{"interlink-lab-demo", "prove-the-paths-pmtu---storage", "x", "x-1"} {
		if !a[want] {
			t.Errorf("no anchor %s in %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Error("a line in a code block made an anchor")
	}
}

func TestMatchShape(t *testing.T) {
	printed := "forward  path MTU 1500  blackhole\n         92 probes in 736ms; rtt 0.088 ms (2 replies)\n  node1   -  1500!\n"
	if err := MatchShape([]string{"forward  path MTU 9000  blackhole", "  90 probes in 1s; rtt 1.5 ms (3 replies)", "  node1          -   9000!"}, printed); err != nil {
		t.Error(err)
	}
	if err := MatchShape([]string{"  blocks_per_sec   32251/s   35831/s  1.114x    0.417..1.424     0.31"}, "  blocks_per_sec  9/s  10/s  0.9x  0.1..12.5  0.00216\n"); err != nil {
		t.Errorf("ratios: %v", err)
	}
	if err := MatchShape([]string{"interlink check: vm, kernel 6.18.44-fc-v595", "root /, 2026-11-28T13:48:42Z", "removed /tmp/x.XXfFzN3t", "slowest node node2: 2 pairs", "interlink bench 198.18.10.2:7471 (interlink 0.1.0~dev.20261128.610bbd59): blocks"}, "interlink check: vm, kernel 6.1.0-56-amd64\nroot /, 2027-01-02T03:04:05Z\nremoved /tmp/x.XXab12cd\nslowest node node3: 2 pairs\ninterlink bench 198.18.10.2:7471 (interlink 0.2.0~dev.20270101.abcdef12): blocks\n"); err != nil {
		t.Errorf("kernel releases: %v", err)
	}
	if err := MatchShape([]string{"forward  path MTU 1500  ok", "...", "  node1   -  1500!"}, printed); err == nil {
		t.Error("another verdict matched")
	}
	if err := MatchShape([]string{"...", "  node1   -  1500"}, printed); err == nil {
		t.Error("a cell without its '!' matched")
	}
}
