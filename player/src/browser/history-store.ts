/**
 * Where a player plugin keeps the device's initial-phase throughput history (the
 * `history` option): a `localStorage` key, any store with the Web Storage methods, or
 * none (this session only). `localStorage` may be missing or blocked: the history is
 * then empty and the no-history rule applies.
 */
import { SammyConfigError } from '../abr/config.js';
import { HISTORY_KEY, InitialThroughputHistory, memoryStore, type KeyValueStore } from '../abr/history.js';
import type { HistoryOption } from './options.js';

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

function isStore(value: object): value is KeyValueStore {
  const s = value as Partial<KeyValueStore>;
  return typeof s.getItem === 'function' && typeof s.setItem === 'function' && typeof s.removeItem === 'function';
}

/** The history the option names; a value of another kind is refused, naming it. */
export function openHistory(option: HistoryOption | undefined, historySize: number): InitialThroughputHistory {
  if (option === undefined) return new InitialThroughputHistory(localStorageStore(), historySize, HISTORY_KEY);
  if (typeof option === 'string' && option !== '') return new InitialThroughputHistory(localStorageStore(), historySize, option);
  if (option === null) return new InitialThroughputHistory(memoryStore(), historySize);
  if (typeof option === 'object' && isStore(option)) return new InitialThroughputHistory(option, historySize);
  throw new SammyConfigError(
    `invalid history: ${JSON.stringify(option)} (accepted: a localStorage key, an object with getItem/setItem/removeItem, or null for none)`,
  );
}
