import { Help, type CommandUnknownOpts } from '@commander-js/extra-typings';

/**
 * Commander's help with a group's commands right after its description, before its options and
 * the global options: `leadctl lists --help` shows what the group does first, not 30 lines of
 * global options. Commands without subcommands keep commander's order.
 */
export function formatHelpCommandsFirst(cmd: CommandUnknownOpts, helper: Help): string {
  const text = Help.prototype.formatHelp.call(helper, cmd, helper);
  if (helper.visibleCommands(cmd).length === 0) return text;
  const lines = text.split('\n');
  // Each section is a title line after a blank line, its items, and a blank line.
  const section = (title: string) =>
    lines.findIndex((line, i) => line === helper.styleTitle(title) && lines[i - 1] === '');
  const commands = section('Commands:');
  const firstOptions = [section('Arguments:'), section('Options:'), section('Global Options:')]
    .filter((i) => i >= 0)
    .reduce((a, b) => Math.min(a, b), commands);
  if (commands < 0 || firstOptions >= commands) return text;
  let end = commands;
  while (end < lines.length && lines[end] !== '') end++;
  const block = lines.slice(commands, end);
  const reordered = [
    ...lines.slice(0, firstOptions),
    ...block,
    '',
    ...lines.slice(firstOptions, commands),
    ...lines.slice(end + 1),
  ];
  return reordered.join('\n');
}
