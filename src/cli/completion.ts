import { Argument } from '@commander-js/extra-typings';
import { defineCommand, rootOf } from './command.js';

const SHELLS = ['bash', 'zsh', 'fish'] as const;

const completion = defineCommand(
  (parent) =>
    parent
      .command('completion')
      .description('print a shell completion script (commands, options, list types, output formats)')
      .addArgument(new Argument('<shell>', 'the shell to complete for').choices(SHELLS))
      .addHelpText(
        'after',
        [
          '',
          'Load it in the current shell, or install it for every new one:',
          '  bash  source <(leadctl completion bash)',
          '        leadctl completion bash > ~/.local/share/bash-completion/completions/leadctl',
          '  zsh   source <(leadctl completion zsh)          (after compinit)',
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a zsh expansion shown to the user, not a template
          '        leadctl completion zsh > "${fpath[1]}/_leadctl"',
          '  fish  leadctl completion fish | source',
          '        leadctl completion fish > ~/.config/fish/completions/leadctl.fish',
        ].join('\n'),
      ),
  async (ctx, [shell], _opts, cmd) => {
    const { completionScript } = await import('../output/completion.js');
    const { packageVersion } = await import('../version.js');
    await ctx.output.write(completionScript(shell, rootOf(cmd), packageVersion()));
  },
);

export const register = completion;
