import { QoeCollector } from '../../src/browser/qoe-collector.js';

/** The parts of an HTMLVideoElement the collector reads, driven by hand. */
class FakeVideo extends EventTarget {
  seeking = false;
  ended = false;
  playedRanges: [number, number][] = [];
  private frameCallbacks: (() => void)[] = [];
  get played() {
    return { length: this.playedRanges.length, start: (i: number) => this.playedRanges[i]![0], end: (i: number) => this.playedRanges[i]![1] };
  }
  requestVideoFrameCallback(cb: () => void): number {
    this.frameCallbacks.push(cb);
    return this.frameCallbacks.length;
  }
  presentFrame(): void {
    const cbs = this.frameCallbacks;
    this.frameCallbacks = [];
    for (const cb of cbs) cb();
  }
  fire(type: string): void {
    this.dispatchEvent(new Event(type));
  }
}

function setup() {
  let clockMs = 1000;
  const video = new FakeVideo();
  const events: string[] = [];
  const collector = new QoeCollector(
    video as unknown as HTMLVideoElement,
    () => clockMs,
    { arm: 'sammy', config: {}, segmentDurationS: 2, ssim: null },
    { frame: (afterSeek) => events.push(afterSeek ? 'frame-after-seek' : 'first-frame'), seek: () => events.push('seek'), rebuffer: () => events.push('rebuffer') },
  );
  return { video, events, collector, advance: (ms: number) => (clockMs += ms) };
}

describe('QoeCollector', () => {
  test('a media error (dash.js rebuilds the MediaSource and seeks back): a rebuffer until playing, no user seek, what was played before is kept', () => {
    const { video, events, collector, advance } = setup();
    collector.playRequested();
    video.presentFrame();
    video.playedRanges = [[0, 20]];
    advance(20_000);
    video.fire('error');
    video.fire('emptied'); // the element forgets `played`
    video.playedRanges = [];
    advance(3000);
    video.seeking = true;
    video.fire('seeking'); // the rebuild seeks back to 20 s
    video.seeking = false;
    video.fire('seeked');
    expect(collector.phase).toBe('playing');
    advance(1000);
    video.fire('playing');
    video.playedRanges = [[20, 24]];
    const q = collector.qoe();
    expect(q).toMatchObject({ rebufferCount: 1, mediaErrors: 1 });
    expect(q.rebufferS).toBeCloseTo(4, 9);
    expect(events).toEqual(['first-frame', 'rebuffer']);
    expect(collector.qoe().mediaErrors).toBe(1);
  });


  test('play delay: from the play request to the first presented frame; the phase follows', () => {
    const { video, events, collector, advance } = setup();
    collector.playRequested(900); // the click, before segments.json was fetched
    expect(collector.phase).toBe('initial');
    advance(350);
    video.presentFrame();
    expect(collector.phase).toBe('playing');
    expect(collector.qoe().playDelayS).toBeCloseTo(0.45, 9);
    expect(events).toEqual(['first-frame']);
  });

  test('a stall after startup is a rebuffer, until playing resumes; waits before the first frame are not', () => {
    const { video, events, collector, advance } = setup();
    collector.playRequested();
    video.fire('waiting'); // startup: not a rebuffer
    video.presentFrame();
    advance(5000);
    video.fire('waiting');
    advance(1500);
    expect(collector.qoe().rebufferS).toBeCloseTo(1.5, 9); // counted while it lasts
    video.fire('playing');
    advance(1000);
    expect(collector.phase).toBe('playing');
    expect(collector.qoe()).toMatchObject({ rebufferCount: 1 });
    expect(collector.qoe().rebufferS).toBeCloseTo(1.5, 9);
    expect(events).toEqual(['first-frame', 'rebuffer']);
  });

  test('a seek: a new initial phase until the next frame; its wait is not a rebuffer; the play delay stays', () => {
    const { video, events, collector, advance } = setup();
    collector.playRequested();
    advance(200);
    video.presentFrame();
    advance(3000);
    video.seeking = true;
    video.fire('seeking');
    expect(collector.phase).toBe('initial');
    video.fire('waiting'); // while seeking
    advance(400);
    video.seeking = false;
    video.fire('seeked');
    video.presentFrame();
    expect(collector.phase).toBe('playing');
    expect(events).toEqual(['first-frame', 'seek', 'frame-after-seek']);
    expect(collector.qoe()).toMatchObject({ rebufferCount: 0, rebufferS: 0 });
    expect(collector.qoe().playDelayS).toBeCloseTo(0.2, 9);
  });

  test('a seek by the player before the first frame (the start position) is not a user seek', () => {
    const { video, events, collector } = setup();
    collector.playRequested();
    video.fire('seeking');
    video.fire('seeked');
    expect(collector.phase).toBe('initial');
    video.presentFrame();
    expect(events).toEqual(['first-frame']);
  });

  test('the summary uses what the video element says was played', () => {
    const { video, collector } = setup();
    collector.playRequested();
    video.presentFrame();
    collector.addChunk({ index: 0, rung: 1, bitrateKbps: 300, sizeBytes: 75_000, downloadS: 0.1, throughputKbps: 6000, phase: 'initial', rtpKbps: null, appliedRateKbps: null, bufferBeforeS: 0, bufferAfterS: 2 });
    collector.addChunk({ index: 1, rung: 4, bitrateKbps: 1050, sizeBytes: 262_500, downloadS: 0.2, throughputKbps: 10500, phase: 'playing', rtpKbps: 11000, appliedRateKbps: 11000, bufferBeforeS: 2, bufferAfterS: 4 });
    video.playedRanges = [[0, 3]];
    const q = collector.qoe();
    expect(q.avgBitrateKbps).toBeCloseTo((300 * 2 + 1050 * 1) / 3, 9);
    expect(q.switchCount).toBe(1);
    expect(q.chunks).toHaveLength(2);
  });
});
