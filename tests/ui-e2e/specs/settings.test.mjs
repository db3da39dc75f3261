// The Settings screen (a refused value writes nothing; saved values land in config.yaml with
// its comments kept, and take effect after "Restart now") and the Logs screen (filtering, and
// no secret in what it shows).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { admin, chat, fakeConfig, scrub, startStack } from '../lib/stack.mjs';
import { launchBrowser, nav, openUi } from '../lib/browser.mjs';

let stack;
let browser;
before(async () => {
  stack = await startStack({ config: fakeConfig('# kept: a comment of the user\nmemory:\n  flush_every: 5\n') });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

const configText = () => readFileSync(join(stack.home, 'config.yaml'), 'utf8');
const valueOf = async (key) => (await admin(stack, 'GET', '/api/settings')).settings.find((s) => s.key === key)?.value;

test('settings: an invalid value is refused with nothing written; valid ones are saved and applied by a restart', { timeout: 60000 }, async () => {
  const { page, step } = await openUi(browser, stack, 'settings');
  const form = page.getByRole('form', { name: 'Settings' });
  await step('open the Settings screen', async () => {
    await nav(page, 'Settings').click();
    await form.getByRole('button', { name: 'Save settings' }).waitFor();
  });

  const original = configText();
  await step('a negative "Extract every N turns" is refused next to the field', async () => {
    await form.getByLabel('Extract every N turns').fill('-3');
    await form.getByRole('button', { name: 'Save settings' }).click();
    await form.getByText('memory.flush_every must be a whole number of 0 or more.', { exact: true }).waitFor();
    await form.getByRole('alert').getByText('Nothing was saved', { exact: false }).waitFor();
  });
  assert.equal(configText(), original, 'a refused change wrote config.yaml');

  await step('a negative price is refused next to the price table', async () => {
    await form.getByLabel('Extract every N turns').fill('5');
    await form.getByRole('button', { name: 'Add a model' }).click();
    await form.getByLabel('Model 1', { exact: true }).fill('my-llama');
    await form.getByLabel('Input price of my-llama').fill('-1');
    await form.getByLabel('Output price of my-llama').fill('0.5');
    await form.getByRole('button', { name: 'Save settings' }).click();
    await page.locator('#setting-prices-error').getByText(/per million tokens/).waitFor();
  });
  assert.equal(configText(), original, 'a refused price wrote config.yaml');

  await step('save valid values', async () => {
    await form.getByLabel('Input price of my-llama').fill('0.2');
    await form.getByLabel('Extract every N turns').fill('8');
    await form.getByLabel('Context budget (tokens)').fill('900');
    await form.getByLabel('Learn only in windows').check();
    await form.getByRole('button', { name: 'Save settings' }).click();
    await form.getByRole('status').getByText(/^Saved: .*memory\.flush_every.*Some changes take effect after a restart\.$/).waitFor();
  });
  const saved = configText();
  assert.match(saved, /flush_every: 8/, 'config.yaml lacks flush_every: 8');
  assert.match(saved, /token_budget: 900/, 'config.yaml lacks token_budget: 900');
  assert.match(saved, /gate_background_learning: true/, 'config.yaml lacks gate_background_learning: true');
  assert.ok(saved.includes('# kept: a comment of the user'), `the comment was lost:\n${scrub(saved)}`);
  assert.equal(await valueOf('memory.flush_every'), 8);
  assert.deepEqual(await valueOf('prices'), { 'my-llama': { input: 0.2, output: 0.5 } });

  const serving = async () =>
    (await admin(stack, 'GET', '/api/logs?lines=1000&level=info')).lines.filter((l) => l.message.includes('MetaClaw is serving')).length;
  const startsBefore = await serving();
  await step('"Restart now" restarts MetaClaw and says so', async () => {
    const restart = page.getByRole('region', { name: 'Restart' });
    await restart.getByRole('button', { name: 'Restart now' }).click();
    await restart.getByText('MetaClaw restarted with the new settings.', { exact: true }).waitFor({ timeout: 40000 });
  });
  const scheduler = await admin(stack, 'GET', '/api/scheduler');
  assert.equal(scheduler.gate_background_learning, true, 'the restarted engine does not gate background learning');
  assert.equal(await serving(), startsBefore + 1, 'the log does not show the engine starting again');
});

test('logs: the lines of this run, filtered by text, with no secret in them', { timeout: 60000 }, async () => {
  await chat(stack, 'a request so that the log has something of this run');
  const { page, step } = await openUi(browser, stack, 'logs');
  const log = page.getByRole('log', { name: 'Log lines' });
  await step('open the Logs screen', async () => {
    await nav(page, 'Logs').click();
    await log.getByText(`MetaClaw is serving addr=127.0.0.1:${stack.port}`, { exact: false }).first().waitFor();
  });
  const all = await log.innerText();
  for (const [name, secret] of [['the upstream key', stack.upstreamKey], ['the proxy key', stack.proxyKey], ['the admin token', stack.token]]) {
    assert.ok(!all.includes(secret), `the Logs screen shows ${name}`);
  }
  await step('filtering by text keeps only the matching lines', async () => {
    await page.getByLabel('Filter').fill('MetaClaw is serving');
    await page.getByText(/showing [12] of \d+ lines/).waitFor();
    const shown = await log.locator('.line').allInnerTexts();
    assert.ok(shown.length >= 1 && shown.every((l) => l.includes('MetaClaw is serving')), `shown: ${scrub(shown.join(' | '))}`);
  });
  await step('the Errors level shows no error lines for a healthy run', async () => {
    await page.getByLabel('Filter').fill('');
    await page.getByLabel('Level').selectOption('error');
    await page.getByText(/showing 0 of 0 lines/).waitFor();
  });
});
