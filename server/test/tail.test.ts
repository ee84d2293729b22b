// TailGate (src/tail.ts): a body passes whole and in order, except its last bytes,
// which wait for release().
import { Readable } from 'node:stream';
import { TailGate } from '../src/tail.js';

function collect(gate: TailGate): { chunks: Buffer[]; done: Promise<Buffer> } {
  const chunks: Buffer[] = [];
  gate.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    gate.on('end', () => resolve(Buffer.concat(chunks)));
    gate.on('error', reject);
  });
  return { chunks, done };
}

test.each([
  ['chunks longer than the tail', [Buffer.from('abcdef'), Buffer.from('ghij')], 3],
  ['chunks shorter than the tail', [Buffer.from('ab'), Buffer.from('c'), Buffer.from('defg')], 5],
  ['a body shorter than the tail', [Buffer.from('ab')], 4],
  ['a one-byte tail', [Buffer.from('abc'), Buffer.from('d')], 1],
])('%s: everything but the last bytes passes at once, the rest after release', async (_name, parts, tailBytes) => {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let asked = false;
  const gate = new TailGate(tailBytes, () => {
    asked = true;
    return released;
  });
  const { chunks, done } = collect(gate);
  Readable.from(parts).pipe(gate);
  const body = Buffer.concat(parts);
  await new Promise((r) => setTimeout(r, 20));
  expect(asked).toBe(true);
  expect(Buffer.concat(chunks).toString()).toBe(body.subarray(0, Math.max(0, body.length - tailBytes)).toString());
  release();
  expect((await done).toString()).toBe(body.toString());
});

test('destroyed while waiting for release, it pushes nothing more', async () => {
  let release!: () => void;
  const gate = new TailGate(2, () => new Promise<void>((r) => (release = r)));
  const chunks: Buffer[] = [];
  gate.on('data', (c: Buffer) => chunks.push(c));
  gate.on('error', () => undefined);
  Readable.from([Buffer.from('abcdef')]).pipe(gate);
  await new Promise((r) => setTimeout(r, 20));
  gate.destroy();
  release();
  await new Promise((r) => setTimeout(r, 20));
  expect(Buffer.concat(chunks).toString()).toBe('abcd');
});
