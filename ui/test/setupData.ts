// Answers of a machine being set up for the first time.

export const SETUP = {
  configured: false,
  answers: { provider: 'openai', api_base: 'https://api.openai.com/v1', api: 'openai', model: 'gpt-4o', mode: 'skills_only', agents: [] as string[] },
  key: { stored: true, source: 'keychain' },
  modes: [
    { name: 'skills_only', label: 'Skills only', description: 'Learns skills and memories; no training.' },
    { name: 'rl', label: 'Reinforcement learning', description: 'Also trains the model.' },
  ],
  windows: { sleep_start: '23:00', sleep_end: '07:00', calendar: { enabled: false, connected: false } },
};

export const PROVIDERS = {
  presets: [
    { name: 'openai', label: 'OpenAI', api_base: 'https://api.openai.com/v1', api: 'openai', default_model: 'gpt-4o', key_required: true },
    { name: 'anthropic', label: 'Anthropic', api_base: 'https://api.anthropic.com', api: 'anthropic', default_model: 'claude-sonnet-4-6', key_required: true },
    { name: 'custom', label: 'Custom (OpenAI- or Anthropic-compatible)', api_base: '', api: 'openai', default_model: '', key_required: false },
  ],
  configured: { provider: 'openai', preset: 'openai', api: 'openai', api_base: 'https://api.openai.com/v1', model_id: 'gpt-4o', key_stored: true },
};

export const AGENTS = {
  agents: [
    { agent: 'openclaw', installed: true, config: '/home/u/.openclaw/openclaw.json', config_exists: true, connected: false, problem: null, notes: [] },
    { agent: 'copaw', installed: false, config: null, config_exists: false, connected: false, problem: null, notes: [] },
  ],
  reconnecting: false,
};

export const PREVIEW = {
  agent: 'openclaw',
  file: '/home/u/.openclaw/openclaw.json',
  creates: false,
  already_connected: false,
  changes: [{ key: 'models.providers.metaclaw.baseUrl', old: null, new: 'http://127.0.0.1:30000/v1' }],
  restart_command: ['openclaw', 'gateway', 'restart'],
  notes: [],
};

export const STATUS = { version: '0.1.0', mode: 'skills_only', listen: '127.0.0.1:30000', uptime_secs: 50, upstreams: [], requests: 0, errors: 0, last_error: null, sessions_open: 0, turns_recorded: 0, skills: null, memory: null };
