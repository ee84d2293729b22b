// The phases of one media response in the pacing controller (pacing.ts), and which
// moves between them are legal (docs/server-contract.md "Response lifecycle"). The
// data each phase holds is pacing.ts's; this is only the graph, so it can be tested.

export type PhaseName = 'queued' | 'sending' | 'tailHeld' | 'draining' | 'done';

/** Where each phase may go. `done` is the only end, aborted or not; nothing leaves it. */
export const PHASE_MOVES: Readonly<Record<PhaseName, readonly PhaseName[]>> = {
  // Its turn on the connection came (sending), or the connection went first (done).
  queued: ['sending', 'done'],
  // A paced stream body's last byte waits (tailHeld); the body is handed over and the
  // response closed (draining); the response or the connection ended early (done).
  sending: ['tailHeld', 'draining', 'done'],
  // The rest has left and the cap is gone, or the wait was cut short: the byte goes.
  tailHeld: ['sending', 'done'],
  draining: ['done'],
  done: [],
};

export class IllegalPhaseMove extends Error {
  constructor(
    readonly from: PhaseName,
    readonly to: PhaseName,
  ) {
    super(`a media response cannot move from ${from} to ${to}`);
    this.name = 'IllegalPhaseMove';
  }
}

/** Throws IllegalPhaseMove unless `from` may move to `to`. */
export function assertPhaseMove(from: PhaseName, to: PhaseName): void {
  if (!PHASE_MOVES[from].includes(to)) throw new IllegalPhaseMove(from, to);
}
