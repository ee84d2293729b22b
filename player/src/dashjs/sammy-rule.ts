/**
 * The Sammy core as two dash.js 5 custom ABR rules (docs/dashjs.md: FactoryMaker class
 * factories, registered with `addABRCustomRule`):
 *   - the bitrate choice (`qualitySwitchRules`, `getSwitchRequest(rulesContext)`): asks
 *     the adapter for a rung before each chunk;
 *   - the stalled-download rule (`abandonFragmentRules`, `shouldAbandon(rulesContext)`,
 *     asked at each progress event of a download): asks the adapter whether to give the
 *     chunk in flight up, and for which rung.
 * Each maps the rung onto the Representation with that id (the encoder's ids are rungs
 * 0..N-1). "No opinion" from the adapter, or any failure, returns "no change", so
 * dash.js keeps the current rung and the download in flight.
 */
import * as dashjsModule from 'dashjs';
import type { MediaInfo, Representation, RulesContext } from 'dashjs';

interface SwitchRequestFactory {
  (context: object): { create(representation?: Representation | null, reason?: unknown, priority?: number): unknown };
  PRIORITY: { WEAK: number; DEFAULT: number; STRONG: number };
}

interface FactoryMakerApi {
  getClassFactory(ctor: unknown): unknown;
  getClassFactoryByName(name: string): unknown;
}

/** dash.js exposes FactoryMaker on its default export (also `window.dashjs`), not as a named export. */
export function factoryMaker(): FactoryMakerApi {
  const ns = dashjsModule as unknown as { default?: { FactoryMaker?: FactoryMakerApi }; FactoryMaker?: FactoryMakerApi };
  const fm = ns.default?.FactoryMaker ?? ns.FactoryMaker;
  if (!fm) throw new Error('dash.js FactoryMaker not found');
  return fm;
}

/**
 * What the rule needs from the adapter: the rung to fetch next, given the highest one
 * allowed; null for no opinion (the core is not running, or Sammy was detached: dash.js
 * keeps a rule instance it has made until the stream ends).
 */
export type RungChooser = (maxRung: number) => { rung: number; reason: string } | null;

/**
 * What the abandonment rule needs from the adapter: given the URL of the video chunk in
 * flight and its bytes so far, the rung to refetch it at, or null to let it run. (The
 * adapter times the request itself: dash.js 5.2.1 leaves the request's `startDate`
 * null.)
 */
export type DownloadChecker = (url: string, loadedBytes: number) => { rung: number; reason: string } | null;

/** The parts of dash.js's FragmentRequest (the rules context's current request) the abandonment rule reads. */
interface FragmentProgress {
  url?: string;
  bytesLoaded?: number;
}

interface SwitchRequestApi {
  create(representation?: Representation | null, reason?: unknown, priority?: number): unknown;
  strong: number;
}

let instances = 0;

/**
 * A rule factory for `player.addABRCustomRule`, with its name. Each call makes a
 * factory with its own name: FactoryMaker caches class factories by name, and a cached
 * one would keep the first session's state.
 */
function ruleFactory(kind: string, build: (context: object, switchRequest: SwitchRequestApi) => object): { name: string; factory: unknown } {
  const fm = factoryMaker();
  function SammyRule(this: { context: object }) {
    const SwitchRequest = fm.getClassFactoryByName('SwitchRequest') as SwitchRequestFactory;
    const context = this.context;
    return { ...build(context, { create: (...args) => SwitchRequest(context).create(...args), strong: SwitchRequest.PRIORITY.STRONG }), reset() {} };
  }
  const name = `Sammy${kind}${++instances}`;
  (SammyRule as unknown as { __dashjs_factory_name: string }).__dashjs_factory_name = name;
  return { name, factory: fm.getClassFactory(SammyRule) };
}

/** The video Representations the player may choose now, lowest rung first. */
function allowedRungs(rulesContext: RulesContext): { rep: Representation; rung: number }[] {
  const mediaInfo: MediaInfo = rulesContext.getMediaInfo();
  return (rulesContext.getAbrController().getPossibleVoRepresentationsFilteredBySettings(mediaInfo, true) ?? [])
    .map((rep) => ({ rep, rung: Number(rep.id) }))
    .filter((x) => Number.isInteger(x.rung))
    .sort((a, b) => a.rung - b.rung);
}

/** The highest allowed rung at or below `rung` (the lowest if none is). */
function repAtOrBelow(allowed: { rep: Representation; rung: number }[], rung: number): Representation {
  return ([...allowed].reverse().find((x) => x.rung <= rung) ?? allowed[0]!).rep;
}

/** The bitrate choice, for `addABRCustomRule('qualitySwitchRules', ...)`. */
export function createSammyRule(choose: RungChooser, log: (message: string, err?: unknown) => void): { name: string; factory: unknown } {
  return ruleFactory('Rule', (_context, SwitchRequest) => ({
    getSwitchRequest(rulesContext: RulesContext) {
      try {
        if (rulesContext.getMediaType() !== 'video') return SwitchRequest.create();
        const allowed = allowedRungs(rulesContext);
        if (allowed.length === 0) return SwitchRequest.create();
        const choice = choose(allowed[allowed.length - 1]!.rung);
        if (choice === null) return SwitchRequest.create();
        return SwitchRequest.create(repAtOrBelow(allowed, choice.rung), { message: `[Sammy] ${choice.reason}` }, SwitchRequest.strong);
      } catch (err) {
        log('Sammy rule failed; keeping the current rung', err);
        return SwitchRequest.create();
      }
    },
  }));
}

/** The stalled-download rule, for `addABRCustomRule('abandonFragmentRules', ...)`. */
export function createSammyAbandonRule(check: DownloadChecker, log: (message: string, err?: unknown) => void): { name: string; factory: unknown } {
  return ruleFactory('AbandonRule', (_context, SwitchRequest) => ({
    shouldAbandon(rulesContext: RulesContext) {
      try {
        if (rulesContext.getMediaType() !== 'video') return SwitchRequest.create();
        const req = rulesContext.getCurrentRequest() as unknown as FragmentProgress | null;
        if (!req?.url) return SwitchRequest.create();
        const verdict = check(req.url, Number(req.bytesLoaded) || 0);
        const allowed = verdict === null ? [] : allowedRungs(rulesContext);
        if (verdict === null || allowed.length === 0) return SwitchRequest.create();
        return SwitchRequest.create(repAtOrBelow(allowed, verdict.rung), { message: `[Sammy] ${verdict.reason}` }, SwitchRequest.strong);
      } catch (err) {
        log('Sammy abandonment rule failed; the download goes on', err);
        return SwitchRequest.create();
      }
    },
  }));
}
