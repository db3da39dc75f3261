// Runs the UI end-to-end suite: checks what it needs, runs every spec with Node's test runner,
// then makes sure no metaclaw process outlived its test file (ending any that did, by pid).
// Needs the OS keychain (run inside the D-Bus session with gnome-keyring, as scripts/test.sh does).
//
//   node tests/ui-e2e/run.mjs [spec name filter]
//   UPDATE_SCREENSHOTS=1 node tests/ui-e2e/run.mjs   # also writes docs/screenshots/*.png

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FAILURES, PIDS_DIR, SCREENSHOTS } from './lib/paths.mjs';
import { FAKE_BIN, METACLAW_BIN } from './lib/stack.mjs';
import { CHROMIUM } from './lib/browser.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const missing = [
  [METACLAW_BIN, 'build it: cargo build --workspace --bins'],
  [FAKE_BIN, 'build it: cargo build --workspace --bins'],
  [CHROMIUM, 'install Debian\'s chromium (scripts/deps.sh)'],
  [join(here, 'node_modules/playwright-core'), 'install it: npm --prefix tests/ui-e2e ci'],
].filter(([p]) => !existsSync(p));
if (missing.length) {
  for (const [p, how] of missing) process.stderr.write(`ui-e2e: missing ${p}: ${how}\n`);
  process.exit(1);
}
if (!process.env.DBUS_SESSION_BUS_ADDRESS) {
  process.stderr.write('ui-e2e: no D-Bus session: run inside dbus-run-session with an unlocked gnome-keyring (see scripts/test.sh)\n');
  process.exit(1);
}

mkdirSync(SCREENSHOTS, { recursive: true });
rmSync(FAILURES, { recursive: true, force: true });

const filter = process.argv[2] ?? '';
const specs = readdirSync(join(here, 'specs'))
  .filter((f) => f.endsWith('.test.mjs') && f.includes(filter))
  .sort()
  .map((f) => join(here, 'specs', f));
if (!specs.length) {
  process.stderr.write(`ui-e2e: no spec matches ${JSON.stringify(filter)}\n`);
  process.exit(1);
}

const started = Date.now();
const run = spawnSync(process.execPath, ['--test', '--test-reporter=spec', '--test-concurrency=2', ...specs], {
  cwd: here,
  stdio: 'inherit',
  timeout: 240_000,
  env: { ...process.env, UI_E2E_RUN: String(process.pid) },
});
let failed = run.status !== 0;
if (run.error) process.stderr.write(`ui-e2e: the test runner failed: ${run.error.message}\n`);

// Any metaclaw a test file started and did not see end (a crash, a timeout) is ended here.
const left = existsSync(PIDS_DIR) ? readdirSync(PIDS_DIR) : [];
for (const name of left) {
  const pid = Number(name);
  let cmd = '';
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
  } catch {
    // already gone
  }
  if (cmd && cmd === readFileSync(join(PIDS_DIR, name), 'utf8')) {
    process.stderr.write(`ui-e2e: metaclaw (pid ${pid}) was left running; ending it\n`);
    process.kill(pid, 'SIGKILL');
    failed = true;
  }
  rmSync(join(PIDS_DIR, name), { force: true });
}
rmSync(PIDS_DIR, { recursive: true, force: true });

const secs = ((Date.now() - started) / 1000).toFixed(1);
process.stdout.write(`ui-e2e: ${failed ? 'FAILED' : 'passed'} in ${secs} s; screenshots in ${SCREENSHOTS}\n`);
process.exit(failed ? 1 : 0);
