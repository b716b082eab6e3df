/**
 * Debian's Chromium, headless, driven by playwright-core at a phone's viewport, with its HOME,
 * config, cache and runtime dirs under a test's scratch dir (never the user's profile).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { chromium } from 'playwright-core';
import type { Browser, BrowserContext } from 'playwright-core';

import { browserEnv } from './testHome.js';

/** The system Chromium, or undefined (the browser suites skip: apt-get install -y chromium; .ci/run does). */
export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));

/** Flags that keep a test browser quiet: no sandbox (containers), no GPU, no background traffic. */
export const QUIET_CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchPhoneBrowser(scratch: string): Promise<{ browser: Browser; context: BrowserContext }> {
  if (CHROMIUM === undefined) throw new Error('chromium not installed (apt-get install -y chromium)');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: QUIET_CHROMIUM_FLAGS, env: browserEnv(join(scratch, 'browser')) });
  const context = await browser.newContext({ viewport: { width: 360, height: 640 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
  return { browser, context };
}
