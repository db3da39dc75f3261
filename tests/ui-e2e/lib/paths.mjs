// Where things are: the repository, and what a run writes under target/ui-e2e/.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '../../..');
export const OUT = join(REPO, 'target/ui-e2e');
export const SCREENSHOTS = join(OUT, 'screenshots');
export const FAILURES = join(OUT, 'failures');
/** One file per metaclaw process started, named by its pid, removed once it has ended; one
 *  directory per run (the runner's pid), so a run only ever ends its own processes. */
export const PIDS_DIR = join(OUT, 'pids', process.env.UI_E2E_RUN ?? String(process.pid));
export const DOCS_SCREENSHOTS = join(REPO, 'docs/screenshots');
