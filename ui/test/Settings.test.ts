import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen } from '@testing-library/svelte';
import Settings from '../src/screens/Settings.svelte';
import { createApi } from '../src/lib/api';
import { changedKeys, priceRows, priceTable, type Setting } from '../src/lib/settings';
import { fetchRoutes, reply } from './fetchRoutes';
import { until } from './helpers';

const SETTINGS: Setting[] = [
  { key: 'mode', label: 'Mode', help: 'What MetaClaw does with your turns.', type: 'choice', choices: ['skills_only', 'rl', 'madmax'], value: 'skills_only', restart: true },
  { key: 'proxy.port', label: 'Proxy port', help: 'Where agents connect.', type: 'int', value: 30000, restart: true },
  { key: 'skills.enabled', label: 'Skills', help: 'Inject learned skills.', type: 'bool', value: true, restart: false },
  { key: 'scheduler.sleep_start', label: 'Sleep starts', help: 'Start of the sleep window.', type: 'time', value: '23:00', restart: false },
  { key: 'memory.scope', label: 'Memory scope', help: 'Default scope.', type: 'text', value: 'default', restart: false },
];

const BODY = { config_path: '/home/u/.metaclaw/config.yaml', settings: SETTINGS, warnings: ['unknown key `foo` ignored'] };

describe('Settings', () => {
  it('renders each type as its control and sends only the changed keys', async () => {
    const { fetch, calls } = fetchRoutes({
      'GET /api/settings': BODY,
      'PATCH /api/settings': { written: ['proxy.port', 'skills.enabled'], restart_required: true },
    });
    render(Settings, { api: createApi({ token: () => 't', fetch }) });
    expect(await screen.findByText('/home/u/.metaclaw/config.yaml')).toBeTruthy();
    expect(screen.getByText('unknown key `foo` ignored')).toBeTruthy();
    expect((screen.getByLabelText('Mode') as HTMLSelectElement).tagName).toBe('SELECT');
    expect((screen.getByLabelText('Sleep starts') as HTMLInputElement).type).toBe('time');
    expect((screen.getByLabelText('Memory scope') as HTMLInputElement).type).toBe('text');

    await fireEvent.input(screen.getByLabelText('Proxy port'), { target: { value: '30001' } });
    await fireEvent.click(screen.getByRole('checkbox', { name: 'Skills' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Save settings' }));

    await until(() => expect(calls.some((c) => c.method === 'PATCH')).toBe(true));
    const patch = calls.find((c) => c.method === 'PATCH');
    expect(patch?.body).toEqual({ changes: { 'proxy.port': 30001, 'skills.enabled': false } });
    expect(await screen.findByRole('button', { name: 'Restart now' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Run setup again' })).toBeTruthy();
  });

  it('shows a refused value next to its field', async () => {
    const { fetch } = fetchRoutes({
      'GET /api/settings': BODY,
      'PATCH /api/settings': reply(400, { error: { message: 'proxy.port must be between 1 and 65535', field: 'proxy.port' } }),
    });
    render(Settings, { api: createApi({ token: () => 't', fetch }) });
    const port = await screen.findByLabelText('Proxy port');
    await fireEvent.input(port, { target: { value: '70000' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save settings' }));
    const err = await screen.findByText('proxy.port must be between 1 and 65535');
    expect(port.getAttribute('aria-describedby')?.split(' ')).toContain(err.id);
    expect(screen.getByRole('alert').textContent).toContain('Nothing was saved');
    expect(screen.queryByRole('button', { name: 'Restart now' })).toBeNull();
  });

  it('changedKeys keeps unchanged values out and coerces numbers', () => {
    expect(changedKeys(SETTINGS, { mode: 'skills_only', 'proxy.port': '30000', 'skills.enabled': true })).toEqual({});
    expect(changedKeys(SETTINGS, { mode: 'rl', 'proxy.port': '8080' })).toEqual({ mode: 'rl', 'proxy.port': 8080 });
  });

  const PRICES: Setting = {
    key: 'prices',
    label: 'Prices',
    help: 'US dollars per million tokens.',
    type: 'prices',
    value: { 'qwen-plus': { input: 0.4, output: 1.2, cache_read: 0.08 } },
    restart: true,
  };

  it('edits the price table row by row and sends it whole', async () => {
    const { fetch, calls } = fetchRoutes({
      'GET /api/settings': { ...BODY, settings: [PRICES] },
      'PATCH /api/settings': { written: ['prices'], restart_required: true },
    });
    render(Settings, { api: createApi({ token: () => 't', fetch }) });
    const table = await screen.findByRole('table', { name: 'Prices, US dollars per million tokens' });
    expect(table.getAttribute('aria-describedby')).toContain('setting-prices-help');
    expect((screen.getByLabelText('Input price of qwen-plus') as HTMLInputElement).value).toBe('0.4');
    expect((screen.getByLabelText('Cache write price of qwen-plus') as HTMLInputElement).value).toBe('');

    // Unchanged: nothing sent.
    await fireEvent.click(screen.getByRole('button', { name: 'Save settings' }));
    expect(await screen.findByText('Nothing changed.')).toBeTruthy();

    await fireEvent.click(screen.getByRole('button', { name: 'Add a model' }));
    await fireEvent.input(screen.getByLabelText('Model 2'), { target: { value: 'my-llama' } });
    await fireEvent.input(screen.getByLabelText('Input price of my-llama'), { target: { value: '0' } });
    await fireEvent.input(screen.getByLabelText('Output price of my-llama'), { target: { value: '0.5' } });
    await fireEvent.input(screen.getByLabelText('Cache read price of qwen-plus'), { target: { value: '' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save settings' }));
    await until(() => expect(calls.some((c) => c.method === 'PATCH')).toBe(true));
    expect(calls.find((c) => c.method === 'PATCH')?.body).toEqual({
      changes: { prices: { 'my-llama': { input: 0, output: 0.5 }, 'qwen-plus': { input: 0.4, output: 1.2 } } },
    });
  });

  it('removes a model from the table, and says when none is left', async () => {
    const { fetch, calls } = fetchRoutes({
      'GET /api/settings': { ...BODY, settings: [PRICES] },
      'PATCH /api/settings': { written: ['prices'], restart_required: true },
    });
    render(Settings, { api: createApi({ token: () => 't', fetch }) });
    await fireEvent.click(await screen.findByRole('button', { name: 'Remove qwen-plus' }));
    expect(screen.getByText('No prices of your own: built-in list prices only.')).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Save settings' }));
    await until(() => expect(calls.some((c) => c.method === 'PATCH')).toBe(true));
    expect(calls.find((c) => c.method === 'PATCH')?.body).toEqual({ changes: { prices: {} } });
  });

  it('turns rows into the table: names in order, blanks left out, text that is not a number kept for the engine to refuse', () => {
    const row = (model: string, input = '1', output = '2', cache_read = '', cache_write = '') => ({ model, input, output, cache_read, cache_write });
    expect(priceTable([row(' b '), row(''), row('a', '0.5', 'x', '0.1')])).toEqual({
      a: { input: 0.5, output: 'x', cache_read: 0.1 },
      b: { input: 1, output: 2 },
    });
    expect(priceRows({ b: { input: 1, output: 2 }, a: { input: 3, output: 4, cache_write: 5 } })).toEqual([
      row('a', '3', '4', '', '5'),
      row('b'),
    ]);
    expect(priceRows(null)).toEqual([]);
    expect(changedKeys([PRICES], { prices: { 'qwen-plus': { cache_read: 0.08, output: 1.2, input: 0.4 } } })).toEqual({});
  });
});
