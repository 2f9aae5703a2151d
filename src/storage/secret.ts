import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';

const cache = new Map<string, string>();

/**
 * The service's signing secret (local blob URLs, web session cookies): SECRET_KEY when set, else a
 * random secret generated once into `${dataDir}/secret` (mode 0600) and read back on later starts,
 * so that several processes on one data dir agree.
 */
export function resolveSecret(config: Pick<Config, 'secret' | 'dataDir'>): string {
  if (config.secret) return config.secret;
  const file = path.join(config.dataDir, 'secret');
  const cached = cache.get(file);
  if (cached) return cached;
  fs.mkdirSync(config.dataDir, { recursive: true });
  let secret: string;
  try {
    secret = crypto.randomBytes(32).toString('hex');
    fs.writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    secret = fs.readFileSync(file, 'utf8').trim();
    if (secret.length < 32) throw new Error(`${file} holds no usable secret; delete it to have a new one generated`);
  }
  cache.set(file, secret);
  return secret;
}
