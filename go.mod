module github.com/interlink/interlink

go 1.26

require (
	github.com/moby/sys/mountinfo v0.7.3
	github.com/spf13/cobra v1.10.2
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/sys v0.1.0 // indirect
)
