/**
 * The Sammy bitrate choice as a dash.js 5 custom ABR rule (docs/dashjs.md: a FactoryMaker
 * class factory with `getSwitchRequest(rulesContext)`, registered with
 * `addABRCustomRule('qualitySwitchRules', ...)`). It asks the adapter for a rung and
 * maps it onto the Representation with that id (the encoder's ids are rungs 0..N-1).
 * "No opinion" from the adapter, or any failure, returns "no change", so dash.js keeps
 * the current rung.
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

let instances = 0;

/**
 * A rule factory for `player.addABRCustomRule`, with its name. Each call makes a
 * factory with its own name: FactoryMaker caches class factories by name, and a cached
 * one would keep the first session's chooser.
 */
export function createSammyRule(choose: RungChooser, log: (message: string, err?: unknown) => void): { name: string; factory: unknown } {
  const fm = factoryMaker();
  function SammyRule(this: { context: object }) {
    const context = this.context;
    const SwitchRequest = fm.getClassFactoryByName('SwitchRequest') as SwitchRequestFactory;
    function getSwitchRequest(rulesContext: RulesContext) {
      try {
        if (rulesContext.getMediaType() !== 'video') return SwitchRequest(context).create();
        const mediaInfo: MediaInfo = rulesContext.getMediaInfo();
        const allowed = (rulesContext.getAbrController().getPossibleVoRepresentationsFilteredBySettings(mediaInfo, true) ?? [])
          .map((rep) => ({ rep, rung: Number(rep.id) }))
          .filter((x) => Number.isInteger(x.rung))
          .sort((a, b) => a.rung - b.rung);
        if (allowed.length === 0) return SwitchRequest(context).create();
        const choice = choose(allowed[allowed.length - 1]!.rung);
        if (choice === null) return SwitchRequest(context).create();
        // The highest allowed rung at or below the choice (the lowest if none is).
        const pick = [...allowed].reverse().find((x) => x.rung <= choice.rung) ?? allowed[0]!;
        return SwitchRequest(context).create(pick.rep, { message: `[Sammy] ${choice.reason}` }, SwitchRequest.PRIORITY.STRONG);
      } catch (err) {
        log('Sammy rule failed; keeping the current rung', err);
        return SwitchRequest(context).create();
      }
    }
    return { getSwitchRequest, reset() {} };
  }
  const name = `SammyRule${++instances}`;
  (SammyRule as unknown as { __dashjs_factory_name: string }).__dashjs_factory_name = name;
  return { name, factory: fm.getClassFactory(SammyRule) };
}
