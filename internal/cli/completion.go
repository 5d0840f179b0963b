package cli

import (
	"github.com/spf13/cobra"
)

func init() { commands = append(commands, newCompletionCmd) }

func newCompletionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print the shell completion script for bash, zsh or fish",
		Long: `Print a completion script for the shell. The packages install them; by hand:

  interlink completion bash > /etc/bash_completion.d/interlink
  interlink completion zsh  > "${fpath[1]}/_interlink"
  interlink completion fish > ~/.config/fish/completions/interlink.fish`,
		Args: exactArgs(1, "a shell: bash, zsh or fish"),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(e.stdout, true)
			case "zsh":
				return root.GenZshCompletion(e.stdout)
			case "fish":
				return root.GenFishCompletion(e.stdout, true)
			default:
				return usageError("completion: unknown shell %q: want bash, zsh or fish", args[0])
			}
		},
		ValidArgs: []string{"bash", "zsh", "fish"},
	}
}
