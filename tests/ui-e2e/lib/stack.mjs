// A fake LLM upstream and a real `metaclaw start --headless --port 0` in throwaway homes,
// with the admin and proxy calls the tests make around the browser. Both processes are
// always ended by `stop()`; the runner also ends any that a crashed test file left behind.

import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { PIDS_DIR, REPO } from './paths.mjs';

export const METACLAW_BIN = process.env.METACLAW_BIN ?? join(REPO, 'target/debug/metaclaw');
export const FAKE_BIN = process.env.FAKE_UPSTREAM_BIN ?? join(REPO, 'target/debug/fake-upstream');

/** Waits (bounded) until `probe` returns a value other than undefined/false. */
export async function until(what, probe, { timeoutMs = 20000, everyMs = 50 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false && v !== null) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${last.message})` : ''}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const secretRegistry = new Set();
/** Replaces every secret a stack made with `***` (errors and logs are printed). */
export function scrub(text) {
  let out = String(text);
  for (const s of secretRegistry) out = out.split(s).join('***');
  return out;
}

function secret(prefix) {
  const s = `${prefix}${randomBytes(12).toString('hex')}`;
  secretRegistry.add(s);
  return s;
}

/** The fake OpenAI/Anthropic server, ended when its stdin closes or on stop(). */
async function startFake(apiKey) {
  const child = spawn(FAKE_BIN, ['--port', '0', '--api-key', apiKey], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    const timer = setTimeout(() => reject(new Error('fake-upstream did not print its port within 10 s')), 10000);
    rl.once('line', (l) => {
      clearTimeout(timer);
      rl.close();
      resolve(l);
    });
    child.once('exit', (code) => reject(new Error(`fake-upstream exited (${code}) before listening`)));
  });
  const m = /^PORT=(\d+)$/.exec(line.trim());
  if (!m) throw new Error(`fake-upstream said ${JSON.stringify(line)}`);
  return { child, base: `http://127.0.0.1:${m[1]}` };
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts the pair. `config(stack)` (it can use the fake's URL) is written to config.yaml;
 * null leaves a fresh home. `storeLlmKey`/`storeProxyKey` put the fake's key and the key
 * agents present into this home's keychain entries (`metaclaw config set`) before the start.
 */
export async function startStack({ config = null, storeLlmKey = true, storeProxyKey = true } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'metaclaw-ui-e2e-'));
  const home = join(root, 'metaclaw');
  const userHome = join(root, 'home');
  mkdirSync(home, { recursive: true });
  mkdirSync(userHome, { recursive: true });

  const upstreamKey = secret('sk-fake-');
  const proxyKey = secret('mc-proxy-');
  const fake = await startFake(upstreamKey);
  const stack = {
    root,
    home,
    userHome,
    upstreamKey,
    proxyKey,
    fakeBase: fake.base,
    fakeOpenaiBase: `${fake.base}/v1`,
    children: { fake: fake.child, metaclaw: null },
    logFile: join(root, 'metaclaw.log'),
  };

  const env = { ...process.env };
  for (const k of ['METACLAW_PROXY_API_KEY', 'METACLAW_LLM_API_KEY', 'DISPLAY', 'WAYLAND_DISPLAY', 'METACLAW_CONFIG']) delete env[k];
  Object.assign(env, {
    METACLAW_HOME: home,
    HOME: userHome,
    XDG_CONFIG_HOME: join(userHome, '.config'),
    METACLAW_SECRET_BACKEND: 'keychain',
    RUST_LOG: env.RUST_LOG ?? 'info',
  });
  stack.env = env;

  try {
    if (config !== null) writeFileSync(join(home, 'config.yaml'), config(stack));
    if (storeLlmKey) cli(stack, ['config', 'set', 'llm.api_key'], upstreamKey);
    if (storeProxyKey) cli(stack, ['config', 'set', 'proxy.api_key'], proxyKey);
    await launch(stack);
  } catch (e) {
    await stop(stack);
    throw e;
  }
  stack.stop = () => stop(stack);
  return stack;
}

/** `metaclaw ARGS` in the stack's home, `input` on stdin; throws with its stderr on failure. */
export function cli(stack, args, input = '') {
  const r = spawnSync(METACLAW_BIN, args, { env: stack.env, input, encoding: 'utf8', timeout: 30000 });
  if (r.status !== 0) {
    throw new Error(scrub(`metaclaw ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout}`));
  }
  return r.stdout;
}

async function launch(stack) {
  const out = openSync(stack.logFile, 'a');
  const child = spawn(METACLAW_BIN, ['start', '--headless', '--port', '0'], {
    env: stack.env,
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  stack.children.metaclaw = child;
  mkdirSync(PIDS_DIR, { recursive: true });
  writeFileSync(join(PIDS_DIR, String(child.pid)), METACLAW_BIN);
  let exited = null;
  child.once('exit', (code, signal) => (exited = code ?? signal));

  const run = join(stack.home, 'run');
  // The pid file is written last: its presence means the port and token files are complete.
  await until('metaclaw to publish its port', () => {
    if (exited !== null) throw new Error(`metaclaw exited (${exited}):\n${logTail(stack)}`);
    return existsSync(join(run, 'metaclaw.pid'));
  }, { timeoutMs: 30000 });
  stack.port = Number(readFileSync(join(run, 'port'), 'utf8').trim());
  stack.token = readFileSync(join(run, 'admin_token'), 'utf8').trim();
  secretRegistry.add(stack.token);
  stack.base = `http://127.0.0.1:${stack.port}`;
  await until('metaclaw /healthz', async () => {
    if (exited !== null) throw new Error(`metaclaw exited (${exited}):\n${logTail(stack)}`);
    const r = await fetch(`${stack.base}/healthz`);
    return r.ok;
  }, { timeoutMs: 30000 });
}

/** The last lines metaclaw wrote (secrets scrubbed), for failure reports. */
export function logTail(stack, lines = 30) {
  try {
    return scrub(readFileSync(stack.logFile, 'utf8').split('\n').slice(-lines).join('\n'));
  } catch {
    return '(no log)';
  }
}

async function endChild(child, name) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  let timer;
  const late = new Promise((r) => (timer = setTimeout(() => r('timeout'), 10000)));
  const outcome = await Promise.race([gone, late]);
  clearTimeout(timer);
  if (outcome === 'timeout') {
    process.stderr.write(`${name} did not stop within 10 s of SIGTERM; killing it\n`);
    child.kill('SIGKILL');
    await gone;
  }
}

async function stop(stack) {
  const mc = stack.children.metaclaw;
  await endChild(mc, 'metaclaw');
  if (mc?.pid && !alive(mc.pid)) rmSync(join(PIDS_DIR, String(mc.pid)), { force: true });
  // The fake holds nothing worth a graceful stop.
  const fake = stack.children.fake;
  if (fake && fake.exitCode === null && fake.signalCode === null) {
    const gone = new Promise((r) => fake.once('exit', r));
    fake.kill('SIGKILL');
    await gone;
  }
  if (!process.env.KEEP_E2E_HOMES) rmSync(stack.root, { recursive: true, force: true });
}

/** An admin API call; returns the parsed JSON, throws with the API's message otherwise. */
export async function admin(stack, method, path, body) {
  const r = await fetch(`${stack.base}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${stack.token}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${path} → ${r.status}: ${scrub(text).slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/** One chat request as an agent would send it, with the proxy key; `history` (earlier
 *  messages of the conversation) comes before `text`, as the next turn of a session. */
export async function chat(stack, text, { session, history = [] } = {}) {
  const r = await fetch(`${stack.base}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${stack.proxyKey}`,
      'Content-Type': 'application/json',
      ...(session ? { 'x-session-id': session } : {}),
    },
    body: JSON.stringify({ model: 'any', messages: [...history, { role: 'user', content: text }] }),
  });
  const body = await r.text();
  if (r.status !== 200) throw new Error(`chat through the proxy → ${r.status}: ${scrub(body).slice(0, 300)}`);
  return JSON.parse(body);
}

/** A config for a home whose upstream is the fake (OpenAI protocol). */
export function fakeConfig(extra = '') {
  return (s) => `llm:\n  provider: custom\n  api: openai\n  api_base: ${s.fakeOpenaiBase}\n  model_id: fake-model\n${extra}`;
}
