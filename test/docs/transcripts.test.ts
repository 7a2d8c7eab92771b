import { describe, expect, it } from 'vitest';
import { runTranscripts, transcriptBlocks, transcriptPages, transcriptProblems } from './walkthrough.js';

// Apart from walkthrough.test.ts so that the two longest runs of this folder can take a worker each.
describe('the transcripts in docs/ (```console run)', () => {
  it('reads commands and the output shown under each, and finds what a run contradicts', () => {
    const [block] = transcriptBlocks(
      ['```console run', '$ leadctl x', 'out 1', 'out 2', '$ echo $?', '4', '$ leadctl y', '```'].join('\n'),
    );
    expect(block!.commands).toEqual([
      { command: 'leadctl x', shown: 'out 1\nout 2' },
      { command: 'echo $?', shown: '4' },
      { command: 'leadctl y', shown: '' },
    ]);
    const ran = (codes: number[], echoed: string) => ({
      block: block!,
      exitCode: 0,
      signal: null,
      output: '',
      commands: block!.commands.map((c, i) => ({ ...c, output: i === 1 ? echoed : '', exitCode: codes[i]! })),
    });
    expect(transcriptProblems(ran([4, 0, 0], '4\n'))).toEqual([]);
    expect(transcriptProblems(ran([2, 0, 0], '2\n')).join()).toMatch(/exited 2, the page shows 4/);
    expect(transcriptProblems(ran([4, 0, 3], '4\n')).join()).toMatch(/`leadctl y` exited 3/);
  });

  it('has pages with transcripts', () => {
    expect(transcriptPages().length).toBeGreaterThanOrEqual(3);
  });

  // Each page has its own sandbox, folder, HOME, config and state: the pages run side by side,
  // one's waits (a sandbox starting and stopping, a shell starting) overlapping another's work.
  it.concurrent.each(transcriptPages().map((p) => [p.slice(p.lastIndexOf('docs/')), p]))(
    '%s: every command ends as the page shows',
    async (_name, page) => {
      const { problems } = await runTranscripts(page);
      expect(problems).toEqual([]);
    },
    120_000,
  );
});
