import http from 'node:http';
import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';
import { makeBlob, tempDataDir } from './support/blob-factories';
import { ConfigError, loadConfig } from '../src/config';

// Network: X-Forwarded-For is believed only from TRUST_PROXY (default: nobody); absolute
// URLs come from PUBLIC_URL (default http://HOST:PORT), never from the Host header.

/** GET with headers fetch() will not send as given (Host). */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, headers: res.headers });
      })
      .on('error', reject);
  });
}

const searchStatuses = async (t: TestApp, forwardedFor: (i: number) => string, count: number) => {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${t.url}/api/v1/search?search=x`, { headers: { 'x-forwarded-for': forwardedFor(i) } });
    await res.arrayBuffer();
    statuses.push(res.status);
  }
  return statuses;
};

describe('TRUST_PROXY', () => {
  test('by default a rotating X-Forwarded-For does not reset the anonymous search limit', async () => {
    const t = await startTestApp({ searchRateLimitPerMinute: 3 });
    try {
      expect(await searchStatuses(t, (i) => `203.0.113.${i + 1}`, 5)).toEqual([200, 200, 200, 429, 429]);
    } finally {
      await t.close();
    }
  });

  test("a trusted proxy's X-Forwarded-For names the client, so each forwarded client has its own limit", async () => {
    const t = await startTestApp({ searchRateLimitPerMinute: 3, trustProxy: ['loopback'] });
    try {
      expect(await searchStatuses(t, (i) => `203.0.113.${i + 1}`, 5)).toEqual([200, 200, 200, 200, 200]);
      expect(await searchStatuses(t, () => '198.51.100.7', 4)).toEqual([200, 200, 200, 429]);
    } finally {
      await t.close();
    }
  });

  test('bad TRUST_PROXY and PUBLIC_URL values are one clear line each', () => {
    const messages = (env: NodeJS.ProcessEnv) => {
      try {
        loadConfig(env);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).problems;
      }
      throw new Error('accepted');
    };
    expect(messages({ TRUST_PROXY: '10.0.0.1, everyone' })).toEqual([
      'TRUST_PROXY must list proxy addresses, CIDR ranges or loopback/linklocal/uniquelocal, got "everyone"',
    ]);
    expect(messages({ TRUST_PROXY: '1' })).toEqual([
      'TRUST_PROXY must list proxy addresses, CIDR ranges or loopback/linklocal/uniquelocal, got "1"',
    ]);
    expect(messages({ PUBLIC_URL: 'https://example.test/base' })).toEqual([
      'PUBLIC_URL must be an origin only, like https://circuits.example.com',
    ]);
    expect(messages({ PUBLIC_URL: 'ftp://example.test' })).toEqual(['PUBLIC_URL must start with http:// or https://']);
    expect(
      loadConfig({ TRUST_PROXY: '10.0.0.0/8, ::1, loopback', PUBLIC_URL: 'https://circuits.example.test/' }),
    ).toMatchObject({ trustProxy: ['10.0.0.0/8', '::1', 'loopback'], publicUrl: 'https://circuits.example.test' });
    expect(loadConfig({})).toMatchObject({ trustProxy: false, publicUrl: undefined });
  });
});

describe('PUBLIC_URL', () => {
  test('the blob download Location is built from PUBLIC_URL; a forged Host or X-Forwarded-Host changes nothing', async () => {
    const data = tempDataDir();
    const t = await startTestApp({
      dataDir: data.dir,
      publicUrl: 'https://circuits.example.test',
      trustProxy: ['loopback'],
    });
    try {
      const owner = await makeUser();
      const blob = await makeBlob(t.app.services.blobStorage, owner.user);
      const port = new URL(t.url).port;
      const forged: Record<string, string>[] = [
        {},
        { host: `evil.example:${port}` },
        { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' },
      ];
      for (const headers of forged) {
        const res = await rawGet(`${t.url}/api/v1/blobs/${blob.uid}/download`, headers);
        expect(res.status).toBe(302);
        expect(res.headers.location).toMatch(
          new RegExp(
            `^https://circuits\\.example\\.test/blob-content/${blob.uid}\\?expires=\\d+&signature=[0-9a-f]{64}$`,
          ),
        );
      }
    } finally {
      await t.close();
      data.remove();
    }
  });
});
