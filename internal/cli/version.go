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
	date    = "" // build date, YYYY-MM-DD
)

// VersionInfo is the result of `interlink version`.
type VersionInfo struct {
	Schema    string `json:"schema"`
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Date      string `json:"build_date,omitempty"`
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
			fmt.Fprintf(e.stdout, "interlink %s\n", v)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON (schema interlink.version/v1)")
	return c
}

func buildVersion() VersionInfo {
	v := VersionInfo{Schema: "interlink.version/v1", Version: version, Commit: commit, Date: date,
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

// String is the one line `interlink version` and `interlink --version`
// print after the program name: "0.1.0 (commit 1a2b3c4d5e6f, built
// 2026-11-23) go1.26.8 linux/amd64".
func (v VersionInfo) String() string {
	s := v.Version
	switch {
	case v.Commit != "" && v.Date != "":
		s += fmt.Sprintf(" (commit %s, built %s)", v.Commit, v.Date)
	case v.Commit != "":
		s += fmt.Sprintf(" (commit %s)", v.Commit)
	}
	return s + fmt.Sprintf(" %s %s/%s", v.GoVersion, v.OS, v.Arch)
}
