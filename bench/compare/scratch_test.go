package main

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/traffic"
)

func TestScratch(t *testing.T) {
	p, err := up("t5-scratch", 1500, os.Getenv("RATE"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p }()
	t.Cleanup(func() { labDown("t5-scratch") })
	var spec traffic.Spec
	json.Unmarshal([]byte(os.Getenv("SPEC")), &spec)
	spec.Duration = 2 * time.Second
	res, err := traffic.RunLocal(context.Background(), spec, traffic.Place{Do: p.n1.Do, Addr: p.a1}, traffic.Place{Do: p.n2.Do, Addr: p.a2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := res.Flows[0]
	f.Client.Intervals, f.Server.Intervals = nil, nil
	b, _ := json.MarshalIndent(f, "", " ")
	t.Log(string(b))
}
