/**
 * `sammyHls(Hls, options)` against a stand-in for hls.js's class (its default loader,
 * ABR controller and buffer lengths): what `detach()` gives back to the player and what
 * a second `attach()` of the same player says. The browser sessions are e2e's.
 */
import { memoryStore } from '../../src/abr/history.js';
import { sammyHls } from '../../src/hlsjs/adapter.js';

/** hls.js's default loader, as far as the plugin's loaders use it: records what it was asked to load. */
class RecordingLoader {
  static contexts: Array<{ headers?: Record<string, string> }> = [];
  constructor(_config: unknown) {}
  load(context: { headers?: Record<string, string> }): void {
    RecordingLoader.contexts.push({ headers: context.headers ? { ...context.headers } : undefined });
  }
  abort(): void {}
  destroy(): void {}
}

const FakeHls = { DefaultConfig: { loader: RecordingLoader, abrController: class {}, maxBufferLength: 30, maxMaxBufferLength: 600 } } as never;

function player(config: Record<string, unknown>) {
  return { config: { ...(FakeHls as { DefaultConfig: object }).DefaultConfig, ...config }, media: null, levels: [] } as never as { config: Record<string, unknown> };
}

const CMCD = { 'CMCD-Object': 'br=1050,ot=v', 'CMCD-Request': 'bl=2000', 'CMCD-Session': 'sid="x"', 'X-App': 'kept' };

function loadFragment(config: Record<string, unknown>, headers: Record<string, string>): Record<string, string> | undefined {
  const Loader = config.fLoader as new (c: unknown) => { load(ctx: unknown, c: unknown, cb: unknown): void };
  RecordingLoader.contexts = [];
  new Loader({}).load({ url: '/media/chunk-4-00002.m4s', headers: { ...headers }, frag: { type: 'main', sn: 1, level: 0 } }, {}, { onSuccess() {}, onError() {} });
  return RecordingLoader.contexts[0]!.headers;
}

const options = { segments: () => ({ nothing: true }), history: memoryStore(), log: () => {} };

describe('sammyHls', () => {
  test('refuses anything but an hls.js class', () => {
    expect(() => sammyHls({} as never, options)).toThrow(/first argument must be the hls.js class/);
  });

  test("detach(): requests leave without the CMCD the setup turned on, and hls.js's buffer lengths come back", () => {
    const setup = sammyHls(FakeHls, { ...options, config: { maxBufferS: 60 } });
    const hls = player(setup.config as Record<string, unknown>);
    const sammy = setup.attach(hls as never);
    expect(hls.config.maxBufferLength).toBe(60);
    // Attached: hls.js's CMCD step's headers go out (the playback has not started: no rtp of ours).
    expect(loadFragment(setup.config as Record<string, unknown>, CMCD)).toEqual(CMCD);
    sammy.detach();
    expect(loadFragment(setup.config as Record<string, unknown>, CMCD)).toEqual({ 'X-App': 'kept' });
    expect(hls.config).toMatchObject({ maxBufferLength: 30, maxMaxBufferLength: 600 });
  });

  test("an app's own CMCD and buffer lengths stay after detach()", () => {
    const setup = sammyHls(FakeHls, options);
    const hls = player({ ...setup.config, cmcd: { useHeaders: true, contentId: 'app' }, maxBufferLength: 45, maxMaxBufferLength: 90 });
    setup.attach(hls as never).detach();
    expect(loadFragment(setup.config as Record<string, unknown>, CMCD)).toEqual(CMCD);
    expect(hls.config).toMatchObject({ maxBufferLength: 45, maxMaxBufferLength: 90 });
  });

  test('attaching the same player again after detach() says why it cannot, instead of a handle that never sends rtp', () => {
    const setup = sammyHls(FakeHls, options);
    const hls = player(setup.config as Record<string, unknown>);
    const sammy = setup.attach(hls as never);
    expect(setup.attach(hls as never)).toBe(sammy);
    sammy.detach();
    expect(() => setup.attach(hls as never)).toThrow(/was detached from this hls.js player.*new sammyHls\(\) setup/);
    expect(() => setup.attach(player({}) as never)).toThrow(/another hls.js player/);
  });
});
