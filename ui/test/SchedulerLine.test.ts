import { describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen } from '@testing-library/svelte';
import './deadlines';
import SchedulerLine from '../src/components/SchedulerLine.svelte';
import type { Api } from '../src/lib/api';
import type { SseEvent } from '../src/lib/sse';

function status(state: string, words: string) {
  return {
    state,
    gate_background_learning: true,
    running: true,
    pause_problem: null,
    text: {
      state: words,
      next_window: 'next window: tonight 23:00 (sleep)',
      idle: "keyboard idle from GNOME's idle monitor",
    },
  };
}

describe('SchedulerLine', () => {
  it('shows the window, follows the event stream, and pauses and resumes', async () => {
    let push: (e: SseEvent) => void = () => {};
    const api: Api = {
      get: vi.fn(async () => status('waiting', 'waiting for a window')) as Api['get'],
      post: vi.fn(async (path: string) =>
        path.endsWith('/pause') ? status('paused', 'paused until resumed') : status('waiting', 'waiting for a window'),
      ) as Api['post'],
      patch: vi.fn(),
      stream: vi.fn((_path: string, onEvent: (e: SseEvent) => void, signal: AbortSignal) => {
        push = onEvent;
        return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
      }),
    };
    const { unmount } = render(SchedulerLine, { api });

    expect(await screen.findByText('waiting for a window')).toBeTruthy();
    expect(screen.getByText(/next window: tonight 23:00/)).toBeTruthy();
    // Where idle is read, so a Wayland user sees their desktop is the source.
    expect(screen.getByText("keyboard idle from GNOME's idle monitor")).toBeTruthy();
    expect(api.stream).toHaveBeenCalledWith('/api/scheduler/events', expect.any(Function), expect.any(AbortSignal));

    // A snapshot from the stream replaces the line.
    push({ event: 'snapshot', data: JSON.stringify(status('open', 'open (sleep) until 07:00')) });
    expect(await screen.findByText('open (sleep) until 07:00')).toBeTruthy();

    await fireEvent.change(screen.getByLabelText('Pause for'), { target: { value: '2h' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Pause learning' }));
    expect(api.post).toHaveBeenCalledWith('/api/scheduler/pause', { for: '2h' });
    expect(await screen.findByText('paused until resumed')).toBeTruthy();

    await fireEvent.click(screen.getByRole('button', { name: 'Resume learning' }));
    expect(api.post).toHaveBeenLastCalledWith('/api/scheduler/resume', undefined);
    expect(await screen.findByText('waiting for a window')).toBeTruthy();

    unmount();
    const signal = (api.stream as ReturnType<typeof vi.fn>).mock.calls[0][2] as AbortSignal;
    expect(signal.aborted).toBe(true);
  });
});
