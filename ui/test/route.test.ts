import { afterEach, describe, expect, it } from 'vitest';
import { render, screen } from '@testing-library/svelte';
import { tick } from 'svelte';
import App from '../src/App.svelte';
import { adoptToken } from '../src/lib/token';
import { screenOf } from '../src/lib/route';
import { fakeApi, until } from './helpers';
import { AGENTS, PROVIDERS, SETUP } from './setupData';

const stubs = {
  'GET /api/providers': PROVIDERS,
  'GET /api/agents': AGENTS,
  'GET /api/scheduler/preview': { next_window: 'tonight 23:00 (sleep)', sleep: '23:00–07:00' },
  'GET /api/scheduler': { state: 'waiting', gate_background_learning: true, running: true, pause_problem: null, text: { state: 'waiting for a window', next_window: '' } },
  'GET /api/settings': { config_path: '/c.yaml', settings: [], warnings: [] },
};

describe('routes', () => {
  afterEach(() => {
    sessionStorage.clear();
    window.history.replaceState(null, '', '/ui/');
  });

  it('reads in-app and desktop-shell fragments', () => {
    expect(screenOf('#/settings')).toBe('settings');
    expect(screenOf('#/logs')).toBe('logs');
    expect(screenOf('#screen=setup')).toBe('setup');
    expect(screenOf('#screen=nope')).toBeNull();
    expect(screenOf('')).toBeNull();
    expect(screenOf('#/unknown')).toBeNull();
  });

  it('opens the screen named by #token=…&screen=setup and keeps the token out of the address bar', async () => {
    window.history.replaceState(null, '', '/ui/#token=secret-token&screen=setup');
    adoptToken();
    const api = fakeApi({ ...stubs, 'GET /api/setup': { ...SETUP, configured: true } });
    render(App, { api });
    expect(await screen.findByRole('heading', { level: 1, name: 'Setup' })).toBeTruthy();
    expect(window.location.hash).toBe('#/setup');
    expect(window.location.href).not.toContain('secret-token');
    expect(screen.getByRole('link', { name: 'Setup' }).getAttribute('aria-current')).toBe('page');
    expect(screen.getByRole('link', { name: 'Settings' })).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Logs' })).toBeTruthy();
  });

  it('opens the setup by itself when MetaClaw is not configured', async () => {
    sessionStorage.setItem('metaclaw.adminToken', 't');
    const api = fakeApi({ ...stubs, 'GET /api/setup': SETUP, 'GET /api/status': new Error('x'), 'GET /api/stats/series': new Error('x') });
    render(App, { api });
    expect(await screen.findByRole('heading', { level: 1, name: 'Setup' })).toBeTruthy();
    expect(window.location.hash).toBe('#/setup');
  });

  it('stays on the dashboard when MetaClaw is configured, and follows hash changes', async () => {
    sessionStorage.setItem('metaclaw.adminToken', 't');
    const api = fakeApi({ ...stubs, 'GET /api/setup': { ...SETUP, configured: true }, 'GET /api/status': new Error('x'), 'GET /api/stats/series': new Error('x') });
    render(App, { api });
    await until(() => expect(api.calls.some((c) => c.path === '/api/setup')).toBe(true));
    // Let the answer reach the app before looking.
    const i = api.calls.filter((c) => c.method === 'GET').findIndex((c) => c.path === '/api/setup');
    await (api.get as unknown as { mock: { results: { value: Promise<unknown> }[] } }).mock.results[i].value;
    await tick();
    expect(window.location.hash).not.toBe('#/setup');
    expect(screen.getByRole('heading', { level: 1, name: 'Dashboard' })).toBeTruthy();
    window.location.hash = '#/settings';
    expect(await screen.findByRole('heading', { level: 1, name: 'Settings' })).toBeTruthy();
  });
});
