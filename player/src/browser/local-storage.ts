/** The history's store in the browser: `localStorage`, or null where it is blocked (the no-history rule then applies). */
import type { KeyValueStore } from '../abr/history.js';

export function localStorageStore(): KeyValueStore | null {
  try {
    const storage = window.localStorage;
    // Reading the property can throw (SecurityError) and some browsers expose a storage
    // that throws on every write: probe once.
    const probe = 'sammy.probe';
    storage.setItem(probe, '1');
    storage.removeItem(probe);
    return storage;
  } catch {
    return null;
  }
}
