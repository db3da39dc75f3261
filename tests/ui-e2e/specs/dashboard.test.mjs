// The dashboard follows the engine live: a request through the proxy shows without a reload.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chat, fakeConfig, startStack } from '../lib/stack.mjs';
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

test('a chat request through the proxy shows on the open dashboard, live from the event stream', { timeout: 60000 }, async () => {
  const { page, step } = await openUi(browser, stack, 'dashboard');
  const status = page.getByRole('region', { name: 'Status' });
  const activity = page.getByRole('region', { name: 'Activity' });
  await step('the dashboard shows no requests yet', async () => {
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    await activity.getByText(/^0 requests in the last 24 hours/).waitFor();
    await status.getByText('0 (0 errors)', { exact: true }).waitFor();
    // Started with --port 0: the panel names the port actually listened on.
    await status.getByText(new RegExp(`mode on 127\\.0\\.0\\.1:${stack.port},`)).waitFor();
  });
  await page.evaluate(() => {
    window.__sameDocument = true;
  });
  // The charts are not polled: only an event on /api/events makes the page ask again.
  const reloaded = page.waitForRequest((r) => r.url().includes('/api/stats/series'), { timeout: 15000 });
  const reply = await step('a chat request goes through the proxy to the fake upstream', () =>
    chat(stack, 'What is the capital of France?'),
  );
  assert.equal(reply.choices[0].message.content, 'Echo: What is the capital of France?');
  await step('the turn event makes the open page reload its numbers', () => reloaded);
  await step('the chart summary and the request count show the request', async () => {
    await activity.getByText(/^1 request in the last 24 hours, median overhead \d/).waitFor();
    await status.getByText('1 (0 errors)', { exact: true }).waitFor();
  });
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'the page was reloaded');
});
