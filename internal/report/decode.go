package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/interlink/interlink/internal/ab"
	"github.com/interlink/interlink/internal/awr"
	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/demo"
	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/pmtu"
	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/schema"
	"github.com/interlink/interlink/internal/traffic"
)

// ErrSchema marks a document that is not a result this package renders:
// bad JSON, no schema field, or a schema it does not know.
var ErrSchema = errors.New("not an interlink result")

// Schemas lists the schemas Decode reads, in the order of the help.
var Schemas = []string{"interlink.check/v1", "interlink.pmtu/v1", "interlink.mesh/v1", "interlink.bench/v1", "interlink.gc/v1", "interlink.ab/v1", "interlink.demo/v1", "interlink.cluster/v1", awr.Schema, awr.DiffSchema}

// Decode reads one JSON result (the --json output of check, pmtu, mesh,
// bench (with --mode gc too), ab, lab demo, cluster, awr or awr diff) by its top-level "schema" field and returns the
// typed result and its schema. Errors wrap ErrSchema and say what was
// wrong in one line.
func Decode(data []byte) (any, string, error) {
	name, err := schema.Sniff(data)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrSchema, err)
	}
	var v any
	switch name {
	case rules.Schema:
		v = &rules.Result{}
	case pmtu.ReportSchema:
		v = &pmtu.Report{}
	case "interlink.mesh/v1":
		v = &mesh.Result{}
	case traffic.Schema:
		v = &traffic.Report{}
	case ab.Schema:
		v = &ab.Result{}
	case demo.Schema:
		v = &demo.Result{}
	case cluster.Schema:
		v = &cluster.Result{}
	case awr.Schema:
		v = &awr.Result{}
	case awr.DiffSchema:
		v = &awr.Diff{}
	case gc.Schema:
		v = &gc.Report{}
	default:
		return nil, name, fmt.Errorf("%w: schema %q is not one of %v", ErrSchema, name, Schemas)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return nil, name, fmt.Errorf("%w: %s: %v", ErrSchema, name, err)
	}
	return v, name, nil
}
