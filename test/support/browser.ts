import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import type { Config } from '../../src/config';
import { startTestApp, type TestApp } from './app';
import { tempDataDir } from './blob-factories';

export const CHROMIUM = '/usr/bin/chromium';

/** Headless, and nothing of Chromium's own that reaches out (this machine's network is closed). */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export interface BrowserSuite {
  /** `test`, or `test.skip` (its reason printed) where Chromium is not installed. */
  maybe: jest.It;
  /** The app under test, its data dir (uploads, screenshots) and Chromium (when installed), started in beforeAll. */
  readonly t: TestApp;
  readonly dataDir: string;
  readonly browser: Browser;
}

/**
 * A browser test file's setup: a real app on a fresh database with its own data dir, and Debian's
 * Chromium, started before its tests and closed after them. Where Chromium is absent, the app still
 * starts (for a file's HTTP-only tests) and every `maybe` test is skipped with the reason printed.
 * `config`: settings of the app, read when it starts (after the file's earlier beforeAll hooks).
 */
export function browserSuite(name: string, config: () => Partial<Config> = () => ({})): BrowserSuite {
  const available = fs.existsSync(CHROMIUM);
  if (!available) console.log(`${name}: skipped because ${CHROMIUM} is absent (apt-get install -y chromium)`);
  let t: TestApp | undefined;
  let data: ReturnType<typeof tempDataDir> | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    data = tempDataDir();
    t = await startTestApp({ ...config(), dataDir: data.dir });
    if (available) browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    data?.remove();
  });
  return {
    maybe: available ? test : test.skip,
    get t() {
      return t!;
    },
    get dataDir() {
      return data!.dir;
    },
    get browser() {
      return browser!;
    },
  };
}
