// Pause and resume learning from the dashboard's training-window panel.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, fakeConfig, startStack } from '../lib/stack.mjs';
import { launchBrowser, openUi } from '../lib/browser.mjs';

let stack;
let browser;
before(async () => {
  stack = await startStack({ config: fakeConfig() });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

test('pausing learning from the dashboard shows paused, here and in the API; resuming undoes it', { timeout: 60000 }, async () => {
  const { page, step } = await openUi(browser, stack, 'pause');
  const panel = page.getByRole('region', { name: 'Training window' });
  await step('pause learning until resumed', async () => {
    await panel.getByLabel('Pause for').selectOption({ label: 'until resumed' });
    await panel.getByRole('button', { name: 'Pause learning' }).click();
  });
  await step('the dashboard says paused until resumed', async () => {
    await panel.getByText('paused until resumed', { exact: true }).waitFor();
    await panel.getByRole('button', { name: 'Resume learning' }).waitFor();
  });
  const paused = await admin(stack, 'GET', '/api/scheduler');
  assert.equal(paused.state, 'paused');
  await step('resume learning', () => panel.getByRole('button', { name: 'Resume learning' }).click());
  await step('the dashboard is no longer paused', async () => {
    await panel.getByRole('button', { name: 'Pause learning' }).waitFor();
    await panel.getByText('paused until resumed', { exact: true }).waitFor({ state: 'detached' });
  });
  const resumed = await admin(stack, 'GET', '/api/scheduler');
  assert.notEqual(resumed.state, 'paused');
});
