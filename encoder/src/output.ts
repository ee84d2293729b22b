/**
 * The output folder: written into a temporary sibling and renamed into place at the
 * end, so a failed or interrupted run never leaves something that looks like a ladder.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { EncoderError } from './errors.js';

/** Creates the temporary output folder beside `outDir`, so the final rename is atomic. */
export function prepareOutput(outDir: string): { finalDir: string; tmpDir: string } {
  const finalDir = resolve(outDir);
  if (existsSync(finalDir)) {
    const st = statSync(finalDir);
    if (!st.isDirectory()) throw new EncoderError('ENC_OUT_UNWRITABLE', `output ${outDir} exists and is not a folder`);
    const entries = readdirSync(finalDir);
    const isLadder = entries.includes('manifest.mpd') || entries.includes('segments.json');
    if (entries.length > 0 && !isLadder) {
      throw new EncoderError('ENC_OUT_NOT_LADDER', `output folder ${outDir} is not empty and holds no ladder; choose another --out`);
    }
  }
  const parent = dirname(finalDir);
  try {
    mkdirSync(parent, { recursive: true });
    const tmpDir = mkdtempSync(join(parent, `.${basename(finalDir)}.partial-`));
    return { finalDir, tmpDir };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new EncoderError('ENC_OUT_UNWRITABLE', `cannot write to output folder ${outDir}: ${e.code ?? ''} ${e.message}`.trim());
  }
}

/** Moves the finished ladder into place, replacing an earlier ladder only after success. */
export function publish(tmpDir: string, finalDir: string): void {
  if (existsSync(finalDir)) {
    const old = `${tmpDir}.old`;
    renameSync(finalDir, old);
    renameSync(tmpDir, finalDir);
    rmSync(old, { recursive: true, force: true });
  } else {
    renameSync(tmpDir, finalDir);
  }
}

/** Folders being written right now, removed by {@link abandonPartialOutputs} on a signal. */
const partialDirs = new Set<string>();

export function abandonPartialOutputs(): void {
  for (const dir of partialDirs) rmSync(dir, { recursive: true, force: true });
  partialDirs.clear();
}

/** Marks `dir` as being written (removed by {@link abandonPartialOutputs}) until {@link donePartialOutput}. */
export function startPartialOutput(dir: string): void {
  partialDirs.add(dir);
}

/** Removes a temporary folder once the run is over, published or not. */
export function donePartialOutput(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  partialDirs.delete(dir);
}
