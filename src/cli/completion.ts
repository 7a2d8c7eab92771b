import { Argument } from 'commander';
import type { Command } from 'commander';
import type { Handler, Register } from './command.js';

const SHELLS = ['bash', 'zsh', 'fish'];

const completion: Handler = async (ctx, args, _opts, cmd) => {
  const { completionScript } = await import('../output/completion.js');
  const { packageVersion } = await import('../version.js');
  let root: Command = cmd;
  while (root.parent) root = root.parent;
  await ctx.output.write(completionScript(args[0] as 'bash' | 'zsh' | 'fish', root, packageVersion()));
};

export const register: Register = (program, bind) => {
  program
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
    )
    .action(bind(completion));
};
