import type { CommandUnknownOpts as Command } from '@commander-js/extra-typings';
import { LIST_TYPE_ALIASES } from '../schema/lists.js';
import { bashCompletion } from './completion-bash.js';
import { fishCompletion } from './completion-fish.js';
import { completionSpec } from './completion-spec.js';
import type { CommandSpec } from './completion-spec.js';
import { zshCompletion } from './completion-zsh.js';

export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish'] as const;
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

/** The program's tree with the value hints commander cannot know: --type takes the list-type aliases. */
export function programSpec(program: Command): CommandSpec {
  return completionSpec(program, { optionValues: { '--type': Object.keys(LIST_TYPE_ALIASES) } });
}

export function completionScript(shell: CompletionShell, program: Command, version: string): string {
  const spec = programSpec(program);
  switch (shell) {
    case 'bash':
      return bashCompletion(spec, version);
    case 'zsh':
      return zshCompletion(spec, version);
    case 'fish':
      return fishCompletion(spec, version);
  }
}
