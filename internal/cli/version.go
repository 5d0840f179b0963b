package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/interlink/interlink/internal/report"
)

// Set by the linker: -X github.com/interlink/interlink/internal/cli.version=...
var (
	version = ""
	commit  = ""
)

// VersionInfo is the result of `interlink version`.
type VersionInfo struct {
	Schema    string `json:"schema"`
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
}

func init() { commands = append(commands, newVersionCmd) }

func newVersionCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version of this binary",
		RunE: func(cmd *cobra.Command, args []string) error {
			v := buildVersion()
			if asJSON {
				return report.JSON(e.stdout, v)
			}
			fmt.Fprintf(e.stdout, "interlink %s", v.Version)
			if v.Commit != "" {
				fmt.Fprintf(e.stdout, " (%s)", v.Commit)
			}
			fmt.Fprintf(e.stdout, " %s %s/%s\n", v.GoVersion, v.OS, v.Arch)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON (schema interlink.version/v1)")
	return c
}

func buildVersion() VersionInfo {
	v := VersionInfo{Schema: "interlink.version/v1", Version: version, Commit: commit,
		GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && v.Commit == "" && len(s.Value) >= 12 {
				v.Commit = s.Value[:12]
			}
		}
	}
	if v.Version == "" {
		v.Version = "devel"
	}
	return v
}
