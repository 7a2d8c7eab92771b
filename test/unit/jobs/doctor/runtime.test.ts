import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkCronPath, findOnPath, LEADCTL_BIN, supportedNode } from '../../../../src/jobs/doctor/runtime.js';

const work = mkdtempSync(join(tmpdir(), 'leadctl-doctor-unit-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('runtime and cron PATH', () => {
  it('supports Node 22.13+ and 24+, as bin/leadctl.js does', () => {
    expect(['v20.20.2', 'v22.12.0', 'v23.11.0'].map(supportedNode)).toEqual([false, false, false]);
    expect(['v22.13.0', 'v22.20.1', 'v24.0.0', 'v25.1.0'].map(supportedNode)).toEqual([true, true, true, true]);
  });

  it('finds executables on a PATH the way a shell does (first folder first, executables only)', () => {
    const a = join(work, 'a');
    const b = join(work, 'b');
    mkdirSync(a);
    mkdirSync(b);
    writeFileSync(join(a, 'tool'), '#!/bin/sh\n');
    chmodSync(join(a, 'tool'), 0o644);
    writeFileSync(join(b, 'tool'), '#!/bin/sh\n');
    chmodSync(join(b, 'tool'), 0o755);
    mkdirSync(join(a, 'dir-named-tool'));
    expect(findOnPath('tool', `${a}:${b}`)).toBe(join(b, 'tool'));
    expect(findOnPath('dir-named-tool', a)).toBeUndefined();
  });

  it('cron PATH: ok with this leadctl and a supported node; else a warning with the full command', () => {
    const dir = join(work, 'cron');
    mkdirSync(dir);
    const none = checkCronPath(dir, undefined);
    expect(none).toMatchObject({ status: 'warn', value: `cron's PATH ${dir} finds no leadctl and no node` });
    expect(none.hint).toContain(`${process.execPath} ${LEADCTL_BIN} …`);
    symlinkSync(process.execPath, join(dir, 'node'));
    symlinkSync(LEADCTL_BIN, join(dir, 'leadctl'));
    expect(checkCronPath(dir, undefined)).toMatchObject({
      status: 'ok',
      value: `cron's PATH ${dir} finds leadctl at ${join(dir, 'leadctl')} and node ${process.version} at ${join(dir, 'node')}`,
    });
  });

  it('cron PATH: the PATH it suggests adds each missing folder once, and only when a PATH can help', () => {
    const dir = join(work, 'cron-hint');
    const linked = join(work, 'cron-hint-bin');
    mkdirSync(dir);
    mkdirSync(linked);
    symlinkSync(LEADCTL_BIN, join(linked, 'leadctl'));
    const nodeDir = dirname(process.execPath);
    // leadctl on the current PATH, node not on cron's: both folders, once each, before cron's own.
    const both = checkCronPath(dir, `${linked}:${nodeDir}`);
    expect(both.hint).toContain(`set PATH=${nodeDir}:${linked}:${dir} at its top`);
    // node's folder already on cron's PATH, after an older node: moved to the front, not repeated.
    const older = join(work, 'cron-hint-old');
    mkdirSync(older);
    writeFileSync(join(older, 'node'), '#!/bin/sh\necho v20.20.2\n');
    chmodSync(join(older, 'node'), 0o755);
    const once = checkCronPath(`${older}:${nodeDir}`, linked);
    expect(once.hint).toContain(`set PATH=${nodeDir}:${linked}:${older} at its top`);
    // No leadctl on any PATH (a checkout run as bin/leadctl.js): only the command that works.
    const none = checkCronPath(dir, '/nonexistent');
    expect(none.hint).not.toContain('set PATH');
    expect(none.hint).toContain(`${process.execPath} ${LEADCTL_BIN} …`);
  });

  it('cron PATH: the release’s launcher runs its own Node, whatever node the PATH has', () => {
    const release = join(work, 'leadctl-9.9.9-linux-x64');
    mkdirSync(join(release, 'bin'), { recursive: true });
    mkdirSync(join(release, 'node', 'bin'), { recursive: true });
    writeFileSync(
      join(release, 'bin', 'leadctl'),
      '#!/bin/sh\nexec "$root/node/bin/node" "$root/bin/leadctl.js" "$@"\n',
    );
    chmodSync(join(release, 'bin', 'leadctl'), 0o755);
    symlinkSync(process.execPath, join(release, 'node', 'bin', 'node'));
    const dir = join(work, 'cron-release');
    mkdirSync(dir);
    symlinkSync(join(release, 'bin', 'leadctl'), join(dir, 'leadctl'));
    expect(checkCronPath(dir, undefined)).toMatchObject({
      status: 'ok',
      value: `cron's PATH ${dir} finds leadctl at ${join(dir, 'leadctl')} (another installation than this one) and its own node ${process.version} at ${join(release, 'node', 'bin', 'node')}`,
    });
  });
});
