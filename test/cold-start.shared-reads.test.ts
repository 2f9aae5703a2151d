import { Client } from 'pg';
import { ApiToken, CircuitVersion } from '../src/models';
import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeUser } from './support/factories';
import { makeRunnableCircuit, submitRun } from './support/run-factories';

/**
 * What a request reads once and keeps (the token's user, the circuit behind an adaptor, a version) is
 * read once when many requests need it at the same moment — a cold start, a deploy, a burst of new
 * clients — not once per request: the first read is shared with those that arrive while it runs.
 */
describe('many requests arriving at once on a cold process share the reads they all need', () => {
  let api: TestApp;
  beforeAll(async () => {
    api = await startTestApp();
  });
  afterAll(async () => {
    await api.close();
  });
  afterEach(() => jest.restoreAllMocks());

  // Every statement of the process goes through pg's Client#query (Sequelize's and the prepared ones).
  const statementsLike = (spy: jest.SpyInstance, fragment: string) =>
    spy.mock.calls.filter((call) => {
      const query = call[0] as string | { text?: string };
      return (typeof query === 'string' ? query : (query?.text ?? '')).includes(fragment);
    }).length;

  it('40 requests with a token this process has not seen read it once and mark it used once', async () => {
    const ada = await makeUser();
    const reads = jest.spyOn(Client.prototype, 'query');
    const touches = jest.spyOn(ApiToken, 'update');
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => api.rest('GET', '/users/stars', { token: ada.token })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));
    expect(statementsLike(reads, 'FROM api_tokens t JOIN users u')).toBe(1);
    expect(touches).toHaveBeenCalledTimes(1);
  });

  it('40 first queries of one circuit read its circuit once and its version once', async () => {
    const ada = await makeUser();
    const { adaptorUid } = await makeRunnableCircuit(ada, HELLO_DEFINITION);
    // The token is known before the burst: only the circuit's reads are counted.
    expect((await api.rest('GET', '/users/stars', { token: ada.token })).status).toBe(200);
    const reads = jest.spyOn(Client.prototype, 'query');
    const versionReads = jest.spyOn(CircuitVersion, 'findByPk');
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => submitRun(api, ada.token, adaptorUid, { input: { name: 'Ada' } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));
    expect(statementsLike(reads, 'JOIN circuit_adaptors a ON a.circuit_uid = c.uid')).toBe(1);
    expect(versionReads).toHaveBeenCalledTimes(1);
  });
});
