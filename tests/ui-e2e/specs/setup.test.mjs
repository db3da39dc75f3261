// First run: a fresh home opens on Setup; the custom provider (the fake upstream) is tested,
// a mode and sleep hours chosen, and applying restarts MetaClaw and sends a test request
// through it. The key ends up in the keychain, not in config.yaml.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { admin, scrub, startStack } from '../lib/stack.mjs';
import { launchBrowser, openUi } from '../lib/browser.mjs';

let stack;
let browser;
before(async () => {
  stack = await startStack({ config: null, storeLlmKey: false, storeProxyKey: false });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

/** The keychain entry MetaClaw keeps `account` in for this home (Secret Service lookup). */
function keychainHas(account, value) {
  const r = spawnSync('secret-tool', ['lookup', 'service', `metaclaw:${stack.home}`, 'username', account], {
    env: stack.env,
    encoding: 'utf8',
    timeout: 10000,
  });
  return r.status === 0 && r.stdout === value;
}

test('setup on a fresh home: test the connection, choose mode and hours, apply, restart, verify', { timeout: 90000 }, async () => {
  const fresh = await admin(stack, 'GET', '/api/setup');
  assert.equal(fresh.configured, false, 'a fresh home is not configured');

  const { page, step } = await openUi(browser, stack, 'setup');
  const form = page.getByRole('form', { name: 'Setup' });
  await step('the UI opens on the Setup screen', async () => {
    await page.getByRole('heading', { name: 'Setup', level: 1 }).waitFor();
    await form.waitFor();
    assert.equal(new URL(page.url()).hash, '#/setup');
  });

  await step('choose the custom provider with the fake upstream and a key', async () => {
    await form.getByRole('radiogroup', { name: 'Provider' }).getByRole('radio', { name: /^Custom/ }).check();
    await form.getByLabel('Base URL').fill(stack.fakeOpenaiBase);
    await form.getByLabel('Protocol').selectOption('openai');
    await form.getByLabel('Model').fill('fake-model');
    await form.getByLabel('API key').fill(stack.upstreamKey);
  });
  await step('"Test connection" succeeds', async () => {
    await form.getByRole('button', { name: 'Test connection' }).click();
    await form.getByText(/^Connected in \d+ ms\./).waitFor();
  });

  const modes = form.getByRole('group', { name: 'Mode' });
  await step('pick the MadMax mode (the default is Skills only)', async () => {
    assert.equal(await modes.getByRole('radio', { name: 'Skills only' }).isChecked(), true);
    const radio = modes.getByRole('radio', { name: 'MadMax' });
    await radio.check();
    assert.equal(await radio.isChecked(), true);
  });

  const preview = page.getByTestId('next-window');
  await step('set sleep hours 22:30–06:30 and see the next window follow', async () => {
    await preview.getByText(/^Next window: .*(23:00|07:00)/).waitFor();
    await form.getByLabel('Sleep starts').fill('22:30');
    await form.getByLabel('Sleep ends').fill('06:30');
    await preview.getByText(/^Next window: .*(22:30|06:30)/).waitFor();
  });

  // Hold the restart request until the page has said that it is restarting.
  const phase = page.getByTestId('setup-phase');
  let sawRestarting = false;
  await page.route('**/api/restart', async (route) => {
    await phase.getByText('Restarting MetaClaw…').waitFor().then(
      () => (sawRestarting = true),
      () => {},
    );
    await route.continue();
  });
  await step('apply: the page says it is restarting, then shows the test request answered', async () => {
    await form.getByRole('button', { name: 'Apply setup' }).click();
    const result = page.getByTestId('setup-result');
    await result.getByText(/^Test request answered by fake-model in \d+ ms: “Echo: /).waitFor({ timeout: 45000 });
    await result.getByText('the API key is in the keychain', { exact: false }).waitFor();
  });
  assert.equal(sawRestarting, true, 'the page did not say "Restarting MetaClaw…" while restarting');

  const config = readFileSync(join(stack.home, 'config.yaml'), 'utf8');
  assert.match(config, /provider: custom/, 'config.yaml lacks provider: custom');
  assert.ok(config.includes(stack.fakeOpenaiBase), `config.yaml lacks the base URL:\n${scrub(config)}`);
  assert.match(config, /model_id: fake-model/, 'config.yaml lacks model_id: fake-model');
  assert.match(config, /sleep_start: ['"]?22:30/, 'config.yaml lacks sleep_start 22:30');
  assert.ok(!config.includes(stack.upstreamKey), 'the API key was written to config.yaml');
  assert.ok(keychainHas('llm.api_key', stack.upstreamKey), 'the API key is not in the keychain');

  const applied = await admin(stack, 'GET', '/api/setup');
  assert.equal(applied.configured, true);
  assert.equal(applied.answers.provider, 'custom');
  assert.equal(applied.answers.mode, 'madmax');
  assert.match(config, /mode: madmax/, 'config.yaml lacks mode: madmax');
  assert.equal((await admin(stack, 'GET', '/api/status')).mode, 'madmax', 'the restarted engine runs the new mode');
  assert.deepEqual(applied.key, { stored: true, source: 'keychain' });
  assert.equal(applied.windows.sleep_start, '22:30');
  assert.equal(applied.windows.sleep_end, '06:30');
  assert.ok(!JSON.stringify(applied).includes(stack.upstreamKey), 'GET /api/setup shows the key');
});
