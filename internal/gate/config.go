package gate

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"
)

// Config is a gate configuration file: routes and the metrics address.
//
//	metrics: 127.0.0.1:9471
//	routes:
//	  - name: scan
//	    listen: 0.0.0.0:1521
//	    upstream: 192.0.2.10:1521
//	    rate: 20          # admissions per second
//	    burst: 10
//	    queue: 1000
//	    per_source: 100
//	    queue_timeout: 60s
//	    max_inflight: 10
type Config struct {
	Metrics string  `yaml:"metrics"`
	Routes  []Route `yaml:"routes"`
}

// ParseConfig reads a configuration file; unknown fields are errors.
func ParseConfig(r io.Reader, name string) (*Config, error) {
	data, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("gate config %s: %w", name, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var c Config
	if err := dec.Decode(&c); errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %s: empty file, want routes: (see interlink gate --help)", ErrConfig, name)
	} else if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrConfig, name, err)
	}
	if len(c.Routes) == 0 {
		return nil, fmt.Errorf("%w: %s: no routes", ErrConfig, name)
	}
	for i := range c.Routes {
		if err := c.Routes[i].Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return &c, nil
}
