import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * Debian's Chromium for the browser tests: `available` is false (and the reason printed) where it is not
 * installed, and `maybe` is then test.skip. `launch()` starts it headless.
 */
export function browserTests(name: string) {
  const available = fs.existsSync(CHROMIUM);
  if (!available) console.log(`${name}: skipped because ${CHROMIUM} is absent (apt-get install -y chromium)`);
  return {
    available,
    maybe: available ? test : test.skip,
    launch: (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] }),
  };
}
