import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen, within } from '@testing-library/svelte';
import Setup from '../src/screens/Setup.svelte';
import WindowsStep from '../src/components/setup/WindowsStep.svelte';
import { createApi } from '../src/lib/api';
import { fetchRoutes, reply } from './fetchRoutes';
import { until } from './helpers';
import { AGENTS, PREVIEW, PROVIDERS, SETUP, STATUS } from './setupData';

const fast = { intervalMs: 1, sleep: async () => {} };

function routes(extra: Record<string, unknown> = {}) {
  let statusCalls = 0;
  return fetchRoutes({
    'GET /api/setup': SETUP,
    'GET /api/providers': PROVIDERS,
    'GET /api/agents': AGENTS,
    'POST /api/agents/openclaw/preview': PREVIEW,
    'GET /api/scheduler/preview': { next_window: 'tonight 23:00 (sleep)', sleep: '23:00–07:00' },
    'POST /api/setup/apply': { written: ['llm.provider', 'llm.model_id', 'mode'], key: 'stored', restart_required: true },
    'POST /api/restart': { ok: true },
    // Before the restart (uptime 50), down once, then the new run (uptime 0).
    'GET /api/status': () => {
      statusCalls += 1;
      if (statusCalls === 2) return new TypeError('Failed to fetch');
      return { ...STATUS, uptime_secs: statusCalls === 1 ? 50 : 0 };
    },
    'POST /api/agents/openclaw/connect': { agent: 'openclaw', changed: true, warnings: [], notes: [] },
    'POST /api/setup/verify': { ok: true, model: 'gpt-4o', reply: 'Hello from the model', latency_ms: 321 },
    ...extra,
  });
}

describe('Setup', () => {
  it('applies, restarts, waits for the engine, connects the checked agent, verifies, in that order', async () => {
    const { fetch, calls } = routes();
    render(Setup, { api: createApi({ token: () => 't', fetch }), wait: fast });

    const key = (await screen.findByLabelText('API key')) as HTMLInputElement;
    expect(key.value).toBe('');
    expect(screen.getByText(/A key is stored in the keychain/)).toBeTruthy();
    expect((screen.getByLabelText('Model') as HTMLInputElement).value).toBe('gpt-4o');

    await fireEvent.click(await screen.findByRole('checkbox', { name: 'openclaw' }));
    const preview = await screen.findByRole('region', { name: 'Changes for openclaw' });
    await until(() => expect(within(preview).getByText('models.providers.metaclaw.baseUrl')).toBeTruthy());
    // The agent's changes, asked once (the sleep hours' preview is another call, made when its
    // debounce ends, which a slow run may already have passed).
    expect(calls.filter((c) => c.path === '/api/agents/openclaw/preview').length).toBe(1);

    await fireEvent.input(key, { target: { value: 'sk-typed' } });
    await fireEvent.click(screen.getByRole('radio', { name: 'Reinforcement learning' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Apply setup' }));

    const result = await screen.findByText(/Test request answered by/);
    expect(result.textContent).toContain('gpt-4o');
    expect(result.textContent).toContain('321 ms');
    expect(result.textContent).toContain('Hello from the model');
    expect(screen.getByText(/openclaw: connected/)).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Go to the dashboard' }).getAttribute('href')).toBe('#/dashboard');

    const flow = calls
      .map((c) => `${c.method} ${c.path}`)
      .filter((c) => /apply|restart|status|connect|verify/.test(c) && !c.includes('calendar'));
    expect(flow).toEqual([
      'POST /api/setup/apply',
      'GET /api/status',
      'POST /api/restart',
      'GET /api/status',
      'GET /api/status',
      'POST /api/agents/openclaw/connect',
      'POST /api/setup/verify',
    ]);
    const applied = calls.find((c) => c.path === '/api/setup/apply')?.body as Record<string, unknown>;
    expect(applied).toMatchObject({ provider: 'openai', model: 'gpt-4o', api_key: 'sk-typed', mode: 'rl', agents: ['openclaw'], sleep_start: '23:00', sleep_end: '07:00' });
    // The typed key does not linger in the form.
    expect(key.value).toBe('');
  });

  it("shows apply's field error next to that field and goes no further", async () => {
    const { fetch, calls } = routes({
      'POST /api/setup/apply': reply(400, { error: { message: 'model must not be empty', field: 'model' } }),
    });
    render(Setup, { api: createApi({ token: () => 't', fetch }), wait: fast });
    const model = (await screen.findByLabelText('Model')) as HTMLInputElement;
    await fireEvent.input(model, { target: { value: '' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Apply setup' }));

    await until(() => expect(document.getElementById('model-error')?.textContent).toBe('model must not be empty'));
    expect(model.getAttribute('aria-invalid')).toBe('true');
    expect(model.getAttribute('aria-describedby')).toContain('model-error');
    expect(document.getElementById('api_base-error')?.textContent).toBe('');
    expect(screen.getByRole('alert').textContent).toContain('not saved');
    // An empty key field means "keep the stored key": no api_key is sent.
    const applied = calls.find((c) => c.path === '/api/setup/apply')?.body as Record<string, unknown>;
    expect('api_key' in applied).toBe(false);
    expect(calls.some((c) => c.path === '/api/restart' || c.path.endsWith('/connect') || c.path === '/api/setup/verify')).toBe(false);
  });

  it('says in plain words what the connection test found', async () => {
    const { fetch, calls } = routes({
      'POST /api/providers/test': { ok: false, latency_ms: 12, error: { kind: 'auth', message: 'the provider refused the key (401)', status: 401 } },
    });
    render(Setup, { api: createApi({ token: () => 't', fetch }), wait: fast });
    await fireEvent.click(await screen.findByRole('radio', { name: 'Anthropic' }));
    expect((screen.getByLabelText('Base URL') as HTMLInputElement).value).toBe('https://api.anthropic.com');
    expect((screen.getByLabelText('Model') as HTMLInputElement).value).toBe('claude-sonnet-4-6');
    await fireEvent.click(screen.getByRole('button', { name: 'Test connection' }));
    expect(await screen.findByText('Connection failed: the provider refused the key (401)')).toBeTruthy();
    const sent = calls.find((c) => c.path === '/api/providers/test')?.body;
    expect(sent).toEqual({ provider: 'anthropic', api_base: 'https://api.anthropic.com', api: 'anthropic', model: 'claude-sonnet-4-6' });
  });
});

describe('Setup: proxy or plugin', () => {
  it('offers both ways for an agent with a plugin, previews and connects the chosen one, and keeps it out of apply', async () => {
    const { fetch, calls } = routes({
      'GET /api/agents': { ...AGENTS, with_plugin: ['openclaw', 'claude-code'], plugin_only: ['claude-code'] },
    });
    render(Setup, { api: createApi({ token: () => 't', fetch }), wait: fast });
    await fireEvent.click(await screen.findByRole('checkbox', { name: 'openclaw' }));
    const ways = await screen.findByRole('radiogroup', { name: 'How openclaw reaches MetaClaw' });
    const proxy = within(ways).getByRole('radio', { name: /Through the proxy/ }) as HTMLInputElement;
    const plugin = within(ways).getByRole('radio', { name: /Inside openclaw \(plugin\)/ }) as HTMLInputElement;
    expect(proxy.checked).toBe(true);
    expect(plugin.checked).toBe(false);
    await until(() => expect(calls.filter((c) => c.path === '/api/agents/openclaw/preview').length).toBe(1));

    await fireEvent.click(plugin);
    await until(() => expect(calls.filter((c) => c.path === '/api/agents/openclaw/preview').length).toBe(2));
    const previews = calls.filter((c) => c.path === '/api/agents/openclaw/preview');
    expect(previews.map((c) => c.query.get('plugin'))).toEqual([null, 'true']);

    await fireEvent.click(screen.getByRole('button', { name: 'Apply setup' }));
    expect((await screen.findByText(/openclaw: connected \(plugin\)/)).textContent).toBeTruthy();
    const applied = calls.find((c) => c.path === '/api/setup/apply')?.body as Record<string, unknown>;
    expect(applied.agents).toEqual([]);
    expect(applied).not.toHaveProperty('plugins');
    const connect = calls.find((c) => c.path === '/api/agents/openclaw/connect');
    expect(connect?.query.get('plugin')).toBe('true');
  });
});

describe('Setup: WeChat', () => {
  const WECHAT_BOX = /^Talk to OpenClaw from WeChat/;
  const applied = (calls: { path: string; body: unknown }[]) => calls.find((c) => c.path === '/api/setup/apply')?.body as Record<string, unknown> | undefined;

  it('offers WeChat only with openclaw chosen and sends the choice with apply', async () => {
    const { fetch, calls } = routes({ 'GET /api/setup': { ...SETUP, answers: { ...SETUP.answers, wechat: false } } });
    render(Setup, { api: createApi({ token: () => 't', fetch }), wait: fast });
    const openclaw = await screen.findByRole('checkbox', { name: 'openclaw' });
    expect(screen.queryByRole('checkbox', { name: WECHAT_BOX })).toBeNull();

    await fireEvent.click(openclaw);
    const box = (await screen.findByRole('checkbox', { name: WECHAT_BOX })) as HTMLInputElement;
    expect(box.checked).toBe(false);
    expect(box.closest('label')?.textContent).toContain("installs OpenClaw's WeChat plugin with npx; you scan a QR code with WeChat");
    await fireEvent.click(box);
    await fireEvent.click(screen.getByRole('button', { name: 'Apply setup' }));

    expect(await screen.findByText(/Test request answered by/)).toBeTruthy();
    expect(applied(calls)).toMatchObject({ agents: ['openclaw'], wechat: true });
    expect(screen.getByText(/the dashboard shows the plugin's install and the QR code/)).toBeTruthy();
  });

  it('turns WeChat off, unshown, when openclaw is not chosen (it exists only for OpenClaw)', async () => {
    const { fetch, calls } = routes({ 'GET /api/setup': { ...SETUP, answers: { ...SETUP.answers, wechat: true } } });
    render(Setup, { api: createApi({ token: () => 't', fetch }), wait: fast });
    await screen.findByRole('checkbox', { name: 'openclaw' });
    expect(screen.queryByRole('checkbox', { name: WECHAT_BOX })).toBeNull();
    await fireEvent.click(screen.getByRole('button', { name: 'Apply setup' }));
    await until(() => expect(applied(calls)).toBeTruthy());
    expect(applied(calls)).toMatchObject({ agents: [], wechat: false });
    expect(await screen.findByText(/Test request answered by/)).toBeTruthy();
    expect(screen.queryByText(/the dashboard shows the plugin's install/)).toBeNull();
  });

  it('sends no wechat answer to an engine that did not give one', async () => {
    const { fetch, calls } = routes();
    render(Setup, { api: createApi({ token: () => 't', fetch }), wait: fast });
    await fireEvent.click(await screen.findByRole('button', { name: 'Apply setup' }));
    await until(() => expect(applied(calls)).toBeTruthy());
    expect('wechat' in (applied(calls) ?? {})).toBe(false);
    expect(await screen.findByText(/Test request answered by/)).toBeTruthy();
  });

  it("shows apply's wechat.enabled error under the agents", async () => {
    const { fetch } = routes({
      'GET /api/setup': { ...SETUP, answers: { ...SETUP.answers, wechat: true } },
      'POST /api/setup/apply': reply(400, { error: { message: 'WeChat needs claw_type openclaw', field: 'wechat.enabled' } }),
    });
    render(Setup, { api: createApi({ token: () => 't', fetch }), wait: fast });
    await fireEvent.click(await screen.findByRole('button', { name: 'Apply setup' }));
    await until(() => expect(document.getElementById('wechat-error')?.textContent).toBe('WeChat needs claw_type openclaw'));
    expect(screen.getAllByRole('alert').map((a) => a.textContent)).toContain('The settings were not saved: fix the field marked above.');
  });
});

describe('WindowsStep', () => {
  it("previews the next window and shows the server's message when the hours are refused", async () => {
    const { fetch, calls } = fetchRoutes({
      'GET /api/scheduler/preview': (c: { query: URLSearchParams }) =>
        c.query.get('sleep_start') === c.query.get('sleep_end')
          ? reply(400, { error: { message: 'scheduler.sleep_start and sleep_end must differ', field: 'sleep_end' } })
          : { next_window: 'tonight 22:00 (sleep)', sleep: '22:00–07:00' },
    });
    render(WindowsStep, { api: createApi({ token: () => 't', fetch }), sleepStart: '22:00', sleepEnd: '07:00', debounceMs: 1 });
    expect(await screen.findByText('Next window: tonight 22:00 (sleep)')).toBeTruthy();

    await fireEvent.input(screen.getByLabelText('Sleep ends'), { target: { value: '22:00' } });
    expect(await screen.findByText('scheduler.sleep_start and sleep_end must differ')).toBeTruthy();
    expect(screen.queryByText(/Next window:/)).toBeNull();
    const last = calls[calls.length - 1];
    expect(last.query.get('sleep_end')).toBe('22:00');
  });
});

describe('Google Calendar', () => {
  it('opens the sign-in page and shows the calendar connected once the token is stored', async () => {
    let stored = false;
    const { fetch, calls } = fetchRoutes({
      'GET /api/scheduler/preview': { next_window: 'tonight 23:00 (sleep)', sleep: '23:00–07:00' },
      'POST /api/scheduler/calendar/connect': () => {
        return { auth_url: 'https://accounts.google.com/o/oauth2/auth?x=1' };
      },
      'GET /api/setup': () => ({ ...SETUP, windows: { ...SETUP.windows, calendar: { enabled: stored, connected: stored } } }),
      'POST /api/scheduler/calendar/disconnect': { ok: true },
    });
    const opened: unknown[][] = [];
    const realOpen = window.open;
    window.open = ((...args: unknown[]) => {
      opened.push(args);
      return null;
    }) as typeof window.open;
    try {
      render(WindowsStep, { api: createApi({ token: () => 't', fetch }), sleepStart: '23:00', sleepEnd: '07:00', debounceMs: 1, pollMs: 5 });
      await fireEvent.click(screen.getByRole('button', { name: 'Connect Google Calendar' }));
      await until(() => expect(opened[0]?.[0]).toBe('https://accounts.google.com/o/oauth2/auth?x=1'));
      expect(screen.getByRole('link', { name: 'Open the sign-in page' })).toBeTruthy();
      await until(() => expect(calls.filter((c) => c.path === '/api/setup').length).toBeGreaterThan(0));
      expect(screen.queryByText('Google Calendar is connected.')).toBeNull();
      stored = true;
      expect(await screen.findByText('Google Calendar is connected.')).toBeTruthy();
      await fireEvent.click(screen.getByRole('button', { name: 'Disconnect Google Calendar' }));
      expect(await screen.findByRole('button', { name: 'Connect Google Calendar' })).toBeTruthy();
      expect(calls.some((c) => c.method === 'POST' && c.path === '/api/scheduler/calendar/disconnect')).toBe(true);
    } finally {
      window.open = realOpen;
    }
  });
});
