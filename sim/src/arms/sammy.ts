/**
 * The `sammy` arm: the player's own Sammy core (`SammySession` from
 * `@sammy/player/abr`), driven with the same calls the dash.js adapter makes: decide
 * before each request, a sample after each chunk, firstFrame at startup, rebuffer on a
 * stall. The simulator adds nothing to its decisions.
 */
import type { SegmentsSidecar } from '@sammy/encoder/sidecar';
import { declaredFloorKbps, InitialThroughputHistory, SammySession, ladderFromSidecar, memoryStore, resolveSammyConfig, type KeyValueStore, type SammyConfig } from '../core.js';
import type { ArmPolicy, ChunkDone, Decision, DecisionContext, DownloadProgress } from './types.js';

export interface SammyArmOptions {
  config?: Partial<SammyConfig>;
  /**
   * Initial-phase throughputs of earlier sessions on this device, oldest first (the
   * history the core starts from). Empty: a new device, the no-history rule.
   */
  historyKbps?: readonly number[];
  /**
   * The device's storage (a browser's localStorage has this shape): the history is read
   * from it and this session's initial-phase throughput written into it at the first
   * frame, so successive sessions on one device share it. Default: a fresh store.
   */
  historyStore?: KeyValueStore;
}

export class SammyArm implements ArmPolicy {
  readonly arm = 'sammy' as const;
  readonly config: Record<string, unknown>;
  readonly session: SammySession;

  constructor(sidecar: SegmentsSidecar, options: SammyArmOptions = {}) {
    const config = resolveSammyConfig(options.config);
    const history = new InitialThroughputHistory(options.historyStore ?? memoryStore(), config.historySize);
    // One synthetic 1-second initial-phase sample per earlier session records exactly its throughput.
    for (const kbps of options.historyKbps ?? []) history.recordSession([{ sizeBytes: (kbps * 1000) / 8, downloadS: 1, phase: 'initial' }]);
    this.session = new SammySession({ ladder: ladderFromSidecar(sidecar), config, history });
    this.config = { ...this.session.config, historyKbps: history.sessionsKbps() ?? [] };
  }

  bufferTargetS(): number {
    return this.session.config.maxBufferS;
  }

  decide(ctx: DecisionContext): Decision {
    const d = this.session.decide({ bufferS: ctx.bufferS, segmentIndex: ctx.index });
    const declaredFloor = d.rtpKbps === null ? null : declaredFloorKbps(d.pace.floorKbps, d.rtpKbps);
    return { rung: d.rung, rtpKbps: d.rtpKbps, declaredFloorKbps: declaredFloor, phase: d.phase };
  }

  onChunk(chunk: ChunkDone): void {
    // The core's sample: request to last byte, in the phase the chunk was requested in.
    this.session.addSample({
      sizeBytes: chunk.sizeBytes,
      downloadS: chunk.endS - chunk.requestS,
      phase: chunk.phase,
      rtpKbps: chunk.rtpKbps,
      firstByteS: chunk.firstByteS - chunk.requestS,
    });
  }

  onProgress(p: DownloadProgress): number | null {
    const verdict = this.session.checkDownload({ segmentIndex: p.index, rung: p.rung, loadedBytes: p.loadedBytes, elapsedS: p.sinceRequestS, bufferS: p.bufferS });
    return verdict?.rung ?? null;
  }

  onPlaybackStart(): void {
    this.session.firstFrame();
  }

  onStall(): void {
    this.session.rebuffer();
  }
}
