// The dashboard follows the engine live: a request through the proxy shows without a reload;
// the Cost panel reports the recorded turn.

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
  const cost = page.getByRole('region', { name: 'Cost (last 24 hours)' });
  await step('the dashboard shows no requests yet', async () => {
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    await activity.getByText(/^0 requests in the last 24 hours/).waitFor();
    await status.getByText('0 (0 errors)', { exact: true }).waitFor();
    // Started with --port 0: the panel names the port actually listened on.
    await status.getByText(new RegExp(`mode on 127\\.0\\.0\\.1:${stack.port},`)).waitFor();
    await cost.getByRole('heading', { name: 'Cost (last 24 hours)', level: 2 }).waitFor();
    await cost.getByText('No turns in the last 24 hours.', { exact: true }).waitFor();
    await cost.getByText('Nothing in the last 14 days.', { exact: true }).waitFor();
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
  await step('the Cost panel reports the turn, live', async () => {
    // The agent asked for model "any", which is what the turn records; it has no price, so
    // the turn is told in tokens only and the model is named.
    await cost.getByText(/^1 turn in the last 24 hours: [\d,]+ tokens in, [\d,]+ out\.$/).waitFor();
    await cost.getByText(/^No price for any[,:] /).waitFor();
    await cost.getByRole('table', { name: 'Per model' }).getByRole('rowheader', { name: 'any', exact: true }).waitFor();
  });
  await step('the day-by-day table and charts count the turn today', async () => {
    await cost.getByText(/^Over the last 14 days: .*MetaClaw added [\d,]+ tokens?; learning made/).waitFor();
    const days = cost.getByRole('table', { name: 'Day by day' });
    await days.waitFor();
    assert.equal(await days.locator('tbody tr').count(), 14);
    // Oldest first: today (UTC) is the last row, and the turn is counted once.
    const today = new Date().toISOString().slice(0, 10);
    const last = await days.locator('tbody tr th').last().textContent();
    assert.ok(last === today || new Date(`${last}T00:00:00Z`) < new Date(`${today}T00:00:00Z`), last);
    const turns = await days.locator('tbody tr td:first-of-type').allTextContents();
    assert.equal(turns.reduce((a, t) => a + Number(t), 0), 1, turns.join(' '));
    await cost.locator('.uplot canvas').nth(1).waitFor();
  });
});
