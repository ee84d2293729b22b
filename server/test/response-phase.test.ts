// The media response lifecycle's graph (src/response-phase.ts, docs/server-contract.md
// "Response lifecycle"): the moves the pacing controller makes, and that any other
// move throws.
import { assertPhaseMove, IllegalPhaseMove, PHASE_MOVES, type PhaseName } from '../src/response-phase.js';

const PHASES = Object.keys(PHASE_MOVES) as PhaseName[];

test('the legal moves: queued -> sending [-> tailHeld -> sending] -> draining -> done, and done from every phase', () => {
  const legal = PHASES.flatMap((from) => PHASES.filter((to) => PHASE_MOVES[from].includes(to)).map((to) => `${from}->${to}`));
  expect(legal.sort()).toEqual(
    ['queued->sending', 'queued->done', 'sending->tailHeld', 'sending->draining', 'sending->done', 'tailHeld->sending', 'tailHeld->done', 'draining->done'].sort(),
  );
  for (const from of PHASES.filter((p) => p !== 'done')) expect(() => assertPhaseMove(from, 'done')).not.toThrow();
});

test.each([
  ['done', 'sending'],
  ['done', 'done'],
  ['draining', 'sending'],
  ['draining', 'draining'],
  ['queued', 'draining'],
  ['queued', 'tailHeld'],
  ['tailHeld', 'draining'],
  ['sending', 'queued'],
] as [PhaseName, PhaseName][])('%s -> %s throws', (from, to) => {
  expect(() => assertPhaseMove(from, to)).toThrow(IllegalPhaseMove);
  expect(() => assertPhaseMove(from, to)).toThrow(`a media response cannot move from ${from} to ${to}`);
});

test('nothing leaves done, and nothing goes back to queued', () => {
  expect(PHASE_MOVES.done).toEqual([]);
  for (const from of PHASES) expect(PHASE_MOVES[from]).not.toContain('queued');
});
