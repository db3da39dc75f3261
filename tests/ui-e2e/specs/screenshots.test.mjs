// One 1280×800 screenshot per screen, of a MetaClaw with some history (requests, memories,
// the built-in skills): into target/ui-e2e/screenshots/ on every run, and into
// docs/screenshots/ (for docs/desktop-and-web-ui.md) with UPDATE_SCREENSHOTS=1.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { admin, chat, fakeConfig, startStack } from '../lib/stack.mjs';
import { launchBrowser, nav, openUi } from '../lib/browser.mjs';
import { DOCS_SCREENSHOTS, SCREENSHOTS } from '../lib/paths.mjs';

let stack;
let browser;
before(async () => {
  stack = await startStack({ config: fakeConfig('scheduler:\n  sleep_start: "23:00"\n  sleep_end: "07:00"\n') });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

const CHATS = [
  'Write a Python function that parses ISO 8601 dates with time zones',
  'Why does my Rust borrow checker complain about this closure?',
  'Summarise the open pull requests in the billing service',
  'Draft a reply to the customer about the delayed invoice export',
  'How do I add an index to a PostgreSQL table without locking it?',
  'Refactor this React component to use hooks',
];

const MEMORIES = [
  { kind: 'preference', content: 'Prefers concise answers with code first, explanation after', tags: ['style'], pinned: true },
  { kind: 'preference', content: 'Uses tabs in Go and four spaces in Python', tags: ['style'] },
  { kind: 'semantic', content: 'The staging database runs PostgreSQL 15 on port 5433', tags: ['infra'] },
  { kind: 'project_state', content: 'The billing migration is blocked on the invoice export job', tags: ['billing'] },
  { kind: 'episodic', content: 'Fixed the flaky checkout test by freezing the clock on 2 December', tags: ['tests'] },
  { kind: 'semantic', content: 'Deploys go out through GitHub Actions to the eu-west-1 cluster', tags: ['infra'] },
];

async function shoot(page, name) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.mouse.move(0, 0);
  await page.screenshot({ path, animations: 'disabled', caret: 'hide' });
  assert.ok(statSync(path).size > 10_000, `${path} looks empty`);
  if (process.env.UPDATE_SCREENSHOTS === '1') {
    mkdirSync(DOCS_SCREENSHOTS, { recursive: true });
    copyFileSync(path, join(DOCS_SCREENSHOTS, `${name}.png`));
  }
}

test('a screenshot of every screen', { timeout: 90000 }, async () => {
  for (const [i, text] of CHATS.entries()) await chat(stack, text, { session: `screens-${i % 3}` });
  for (const m of MEMORIES) await admin(stack, 'POST', '/api/memory', m);
  // Turns are written in the background; the charts read what is written.
  await admin(stack, 'POST', '/api/recorder/flush');

  const { page, step } = await openUi(browser, stack, 'screenshots');

  await step('dashboard', async () => {
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    const activity = page.getByRole('region', { name: 'Activity' });
    await activity.getByText(`${CHATS.length} requests in the last 24 hours`, { exact: false }).waitFor();
    await activity.locator('.uplot canvas').nth(1).waitFor();
    await page.getByRole('region', { name: 'Status' }).getByText(`${CHATS.length} (0 errors)`, { exact: true }).waitFor();
    await shoot(page, 'dashboard');
  });

  await step('setup', async () => {
    await nav(page, 'Setup').click();
    const form = page.getByRole('form', { name: 'Setup' });
    await form.getByText(/No agents were found|installed|connected|not found/).first().waitFor();
    await form.getByRole('button', { name: 'Test connection' }).click();
    await form.getByText(/^Connected in \d+ ms\./).waitFor();
    await page.getByTestId('next-window').getByText(/^Next window: /).waitFor();
    // The provider step, with the connection test's result, at the top of the picture.
    await form.getByRole('heading', { name: '2. Provider' }).evaluate((h) => h.scrollIntoView({ block: 'start' }));
    await shoot(page, 'setup');
  });

  await step('memory', async () => {
    await nav(page, 'Memory').click();
    await page.getByText(`1–${MEMORIES.length} of ${MEMORIES.length}`, { exact: true }).waitFor();
    const search = page.getByRole('search');
    await search.getByLabel('What to look for').fill('database port');
    await search.getByRole('button', { name: 'Search' }).click();
    const hit = page.getByRole('region', { name: 'Search' }).getByRole('listitem').first();
    await hit.getByText(/matched/).waitFor();
    await hit.getByRole('button').click();
    await page.getByRole('region', { name: 'Memory', exact: true }).getByRole('button', { name: 'Edit' }).waitFor();
    await page.getByRole('heading', { name: 'Memory', level: 1 }).scrollIntoViewIfNeeded();
    await shoot(page, 'memory');
  });

  await step('skills', async () => {
    await nav(page, 'Skills').click();
    await page.getByText(/^\d+ skills$/).waitFor();
    const search = page.getByRole('search');
    await search.getByLabel('A task, as an agent would ask it').fill('write unit tests for a python function');
    await search.getByRole('button', { name: 'Search' }).click();
    const first = page.getByRole('region', { name: 'Search' }).getByRole('row').nth(1);
    await first.waitFor();
    await first.getByRole('button').click();
    await page.locator('pre').first().waitFor();
    await page.getByRole('heading', { name: 'Skills', level: 1 }).scrollIntoViewIfNeeded();
    await shoot(page, 'skills');
  });

  await step('settings', async () => {
    await nav(page, 'Settings').click();
    await page.getByRole('form', { name: 'Settings' }).getByRole('button', { name: 'Save settings' }).waitFor();
    await shoot(page, 'settings');
  });

  await step('logs', async () => {
    await nav(page, 'Logs').click();
    const log = page.getByRole('log', { name: 'Log lines' });
    await log.getByText(/MetaClaw is serving/).first().waitFor();
    await shoot(page, 'logs');
  });
});
