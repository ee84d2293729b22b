/**
 * A synthetic source built from ffmpeg's lavfi generators, so nothing is downloaded.
 * Scenes of {@link SCENE_S} seconds cycle through three kinds of content that stress
 * an encoder differently (a scene change every few seconds, mid-segment):
 *  - testsrc2 with temporal noise: moving pattern plus film-grain-like texture;
 *  - a mandelbrot zoom: smooth motion with fine detail;
 *  - the game of life: high-entropy, blocky motion.
 * Every generator has a fixed seed, so the graph is deterministic: the quality pass
 * rebuilds the same frames to score the rungs against.
 */
export const SCENE_S = 5;

function scene(kind: number, index: number, lengthS: number, width: number, height: number, fps: number): string {
  const trim = `trim=duration=${lengthS},setpts=PTS-STARTPTS`;
  switch (kind) {
    case 0:
      return `testsrc2=s=${width}x${height}:r=${fps}:d=${lengthS},noise=alls=8:allf=t:all_seed=${index + 1}`;
    case 1: {
      // Rendered at a third of the size: mandelbrot is costly per pixel.
      const w = Math.round(width / 6) * 2;
      const h = Math.round(height / 6) * 2;
      const x = (-0.743643887 + index * 1e-4).toFixed(9);
      return `mandelbrot=s=${w}x${h}:r=${fps}:start_x=${x}:start_y=0.131825904:start_scale=3:end_scale=0.02:end_pts=${Math.round(lengthS * fps * 1.5)},scale=${width}:${height}:flags=bicubic,${trim}`;
    }
    default: {
      const w = Math.round(width / 4) * 2;
      const h = Math.round(height / 4) * 2;
      return `life=s=${w}x${h}:r=${fps}:mold=10:ratio=0.1:seed=${index + 7}:death_color=#C83232:life_color=#00ff00,scale=${width}:${height}:flags=neighbor,${trim}`;
    }
  }
}

/** Filter-graph text (no output label) producing `durationS` of synthetic video. */
export function syntheticVideoGraph(durationS: number, width: number, height: number, fps: number): string {
  const count = Math.max(1, Math.ceil(durationS / SCENE_S));
  const parts: string[] = [];
  for (let i = 0; i < count; i++) {
    const lengthS = Math.min(SCENE_S, durationS - i * SCENE_S);
    parts.push(`${scene(i % 3, i, Number(lengthS.toFixed(3)), width, height, fps)},setsar=1[p${i}]`);
  }
  const labels = Array.from({ length: count }, (_, i) => `[p${i}]`).join('');
  return `${parts.join(';')};${labels}concat=n=${count}:v=1:a=0`;
}

/** Filter-graph text (no output label) producing `durationS` of a beeping tone. */
export function syntheticAudioGraph(durationS: number): string {
  return `sine=frequency=440:beep_factor=4:sample_rate=48000:duration=${durationS},aformat=channel_layouts=stereo`;
}
