/**
 * The headless player process: many sessions at once in one Node process (their I/O
 * is asynchronous; a session costs a few timers and sockets), run inside the lab's
 * client namespace so its requests cross the bottleneck. Commands arrive as JSON lines
 * on stdin, events leave as JSON lines on stdout (`protocol.ts`). Devices (the
 * history a browser keeps in localStorage) live here between sessions.
 */
import { createInterface } from 'node:readline';
import { memoryStore } from '@sammy/player/abr';
import { HeadlessSession, type DeviceState } from './session.js';
import type { WorkerCommand, WorkerEvent } from './protocol.js';

const devices = new Map<string, DeviceState>();
const sessions = new Map<string, HeadlessSession>();

function emit(e: WorkerEvent): void {
  process.stdout.write(`${JSON.stringify(e)}\n`);
}

function device(name: string, reset: boolean): DeviceState {
  let d = devices.get(name);
  if (!d || reset) {
    d = { store: memoryStore(), dashjsSavedKbps: null };
    devices.set(name, d);
  }
  return d;
}

function handle(c: WorkerCommand): void {
  if (c.op === 'start') {
    if (sessions.has(c.id)) return emit({ ev: 'error', id: c.id, message: `session ${c.id} is already running`, stage: 'command' });
    const s = new HeadlessSession({ baseUrl: c.baseUrl, arm: c.arm, config: c.config, device: device(c.device, c.resetHistory), startupTimeoutS: c.startupTimeoutS, loadPage: c.loadPage });
    sessions.set(c.id, s);
    // Started once the play request is made (after the page, when it loads one).
    s.started.then(
      (originMs) => emit({ ev: 'started', id: c.id, originMs }),
      (err: Error) => {
        sessions.delete(c.id);
        void s.finish().catch(() => {});
        emit({ ev: 'error', id: c.id, message: err.message, stage: 'command' });
      },
    );
    s.playbackStart.then(
      (atMs) => emit({ ev: 'playing', id: c.id, atMs }),
      (err: Error) => emit({ ev: 'error', id: c.id, message: err.message, stage: 'startup' }),
    );
  } else if (c.op === 'finish') {
    const s = sessions.get(c.id);
    if (!s) return emit({ ev: 'error', id: c.id, message: `no session ${c.id}`, stage: 'command' });
    sessions.delete(c.id);
    s.finish().then(
      (result) => emit({ ev: 'result', id: c.id, result }),
      (err: Error) => emit({ ev: 'error', id: c.id, message: err.message, stage: 'command' }),
    );
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === '') return;
  try {
    handle(JSON.parse(line) as WorkerCommand);
  } catch (err) {
    emit({ ev: 'error', id: null, message: `bad command ${line.slice(0, 200)}: ${(err as Error).message}`, stage: 'command' });
  }
}).on('close', () => process.exit(0));
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => process.exit(0));
emit({ ev: 'ready' });
