/** The headless player process's JSON lines: commands on its stdin, events on its stdout. */
import type { SammyConfig } from '@sammy/player/abr';
import type { SimArm } from '@sammy/sim/arms';
import type { HeadlessResult } from './session.js';

export type WorkerCommand =
  | {
      op: 'start';
      /** Unique per session within the process. */
      id: string;
      /** The device whose history the session reads and writes (e.g. one per arm, or one per simulated viewer). */
      device: string;
      /** Start the device from an empty history (thesis 2.5.6). */
      resetHistory: boolean;
      baseUrl: string;
      arm: SimArm;
      config: Partial<SammyConfig>;
      startupTimeoutS: number;
      /** Fetch the player page and its assets first (a browser with an empty cache). */
      loadPage: boolean;
    }
  | { op: 'finish'; id: string };

export type WorkerEvent =
  | { ev: 'ready' }
  /** The play request is made (after the page and its assets, when the session loads them): the origin of the session's times. */
  | { ev: 'started'; id: string; originMs: number }
  | { ev: 'playing'; id: string; atMs: number }
  | { ev: 'result'; id: string; result: HeadlessResult }
  | { ev: 'error'; id: string | null; message: string; /** `startup`: no frame (the session goes on until finished); `command`: the command failed. */ stage: 'startup' | 'command' };
