/**
 * `ab`: the A/B test as a video team runs it, and its bias (IMC 2021). N viewers start
 * staggered and share the bottleneck; for each treatment share p, one run with
 * round(pN) treatment viewers at random positions. Shares 0 and 1 (everyone on one
 * arm) give the total treatment effect (TTE); every other share gives the A/B
 * estimate: treatment against control viewers of the same run, who compete for the
 * same link.
 */
import { abRun, emptyEstimates, shareOrder, tteOf, withinRuns } from './common.js';
import { biasPoints } from './estimators.js';
import type { DesignSpec } from './spec.js';
import { DESIGN_METRICS, type AbDesign } from './types.js';

export const AB_DESIGN: DesignSpec<AbDesign> = {
  description: 'A/B tests at each treatment share beside the total treatment effect (shares 0 and 1)',
  fields: ['shares'],
  sessionsBased: true,
  parse(o, path, c, _ctx, base) {
    const shares = o.shares ?? [0, 0.1, 0.5, 0.9, 1];
    if (!Array.isArray(shares) || shares.length === 0) return c.bad(`${path}.shares`, shares, 'a non-empty array of treatment shares from 0 to 1');
    const list = shares.map((v, i) => c.num({ [`shares[${i}]`]: v }, path, `shares[${i}]`, 0, 1));
    if (new Set(list.map((p) => Math.round(p * base.sessions))).size !== list.length) c.bad(`${path}.shares`, shares, `shares that give different treatment counts round(p x ${base.sessions})`);
    if (!list.includes(0) || !list.includes(1)) c.bad(`${path}.shares`, shares, 'a list that holds 0 and 1 (everyone on control, everyone on the treatment: the total treatment effect)');
    return { ...base, design: 'ab', shares: list };
  },
  plan: (d, s, trial) => shareOrder(d, trial).map((share) => abRun(d, s, trial, share)),
  summarize(d, runs) {
    const empty = emptyEstimates();
    const out: ReturnType<DesignSpec<AbDesign>['summarize']>['metrics'] = {};
    for (const m of DESIGN_METRICS) {
      const tte = tteOf(runs, m);
      const ab = d.shares
        .filter((p) => p > 0 && p < 1)
        .map((share) => {
          const e = withinRuns(runs, (r) => r.purpose === 'ab' && r.share === share, m);
          return { share, ...e, biasPoints: tte ? biasPoints(e, tte) : null };
        });
      out[m] = { ...empty[m], tte, ab };
    }
    return { metrics: out };
  },
};
