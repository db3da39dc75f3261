// Deadlines on outcomes, the same for every suite: generous, so that a test still passes on a
// machine busy with other work (CI running two jobs on two cores), and only a test that
// fails waits them out. Waiting is always for a condition (`findBy*`, `waitFor`, `until`),
// never a sleep; timing rules (throttles, polls) are tested with fake timers.

import { configure } from '@testing-library/svelte';
import { vi } from 'vitest';

/** How long `findBy*`, `waitFor` and `until` wait for what they look for. */
export const DEADLINE_MS = 10_000;

configure({ asyncUtilTimeout: DEADLINE_MS });
// Above the deadline, so a test that waits in vain reports what it waited for.
vi.setConfig({ testTimeout: 3 * DEADLINE_MS });
