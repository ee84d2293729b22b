import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The e2e package folder. */
export const E2E_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_DIR = resolve(E2E_DIR, '..');
/** Git-ignored: the compiled lab tools and the encoded lab videos. */
export const CACHE_DIR = process.env.SAMMY_LAB_CACHE ?? join(E2E_DIR, '.cache');
export const SCENARIO_DIR = join(E2E_DIR, 'scenarios');
