import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.SAMMY_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Flags for a quiet, deterministic Chromium on a machine without internet access
 * (FACTS.md): no background networking, no QUIC (the server speaks TCP), autoplay.
 */
export const CHROMIUM_ARGS = [
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--autoplay-policy=no-user-gesture-required',
  '--disable-dev-shm-usage',
  '--no-sandbox',
  '--disable-gpu',
];

/** Why Chromium cannot run here, or null when it can. */
export function chromiumUnavailableReason(): string | null {
  if (!existsSync(CHROMIUM_PATH)) return `Chromium not found at ${CHROMIUM_PATH} (sudo apt-get install -y chromium)`;
  return null;
}

/**
 * Launches Debian's Chromium headless; with `netns`, inside that network namespace
 * (through a two-line wrapper script: Playwright itself stays in the root namespace).
 */
export async function launchChromium(opts: { netns?: string } = {}): Promise<Browser> {
  let executablePath = CHROMIUM_PATH;
  if (opts.netns) {
    const dir = mkdtempSync(join(tmpdir(), 'sammy-chromium-'));
    executablePath = join(dir, 'chromium-in-netns');
    writeFileSync(executablePath, `#!/bin/sh\nexec ip netns exec ${opts.netns} ${CHROMIUM_PATH} "$@"\n`);
    chmodSync(executablePath, 0o755);
  }
  return chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
}
