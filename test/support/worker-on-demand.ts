import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CircuitDefinition } from '../../src/domain/definition';
import { startRuntime, type Runtime } from '../../src/runtime';
import { startTestApp, type TestApp } from './app';
import { makeUser, type TestUser } from './factories';
import { startHttpTarget } from './run-factories';

type HttpTarget = Awaited<ReturnType<typeof startHttpTarget>>;

export interface WorkerOnDemand {
  t: TestApp;
  owner: TestUser;
  other: TestUser;
  target: HttpTarget;
  /** Requests to the target that `answer` left open, oldest first: each is a run held in its step. */
  held: ServerResponse[];
  /** A worker in this process, started on demand: until then runs stay PROVISIONED. */
  startWorker(): Promise<void>;
  /** A definition whose one step waits for the target to answer. */
  holdDefinition(): CircuitDefinition;
  /** Waits until at least `count` requests are held. */
  untilHeld(count: number): Promise<void>;
  /** Waits for a held request, then answers every held one `{"done":true}`. */
  releaseHeld(): Promise<void>;
}

/**
 * The setup of tests that decide when runs execute: an app without a worker, an HTTP target that
 * holds every request `answer` does not answer, the circuits' owner and another user. Call it at a
 * test file's top level (it registers the file's beforeAll and afterAll); the fields are set from
 * beforeAll on.
 */
export function workerOnDemand(
  answer: (req: IncomingMessage, res: ServerResponse) => boolean = () => false,
): WorkerOnDemand {
  let worker: Runtime | undefined;
  const setup = {
    held: [] as ServerResponse[],
    async startWorker() {
      if (worker) return;
      // A second composition in this process, as a worker process would have (the app's own executes nothing).
      const { config, sequelize, log, blobStorage, schemas, sandbox } = setup.t.app.services;
      worker = await startRuntime({
        config,
        sequelize,
        log,
        databaseUrl: setup.t.databaseUrl,
        worker: { blobStorage },
        schemas,
        sandbox,
      });
    },
    holdDefinition: (): CircuitDefinition => ({
      query_schema: { type: 'object' },
      steps: [{ id: 'wait', kind: 'http', method: 'GET', url: setup.target.url }],
    }),
    async untilHeld(count: number) {
      const deadline = Date.now() + 15_000;
      while (setup.held.length < count && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(setup.held.length).toBeGreaterThanOrEqual(count);
    },
    async releaseHeld() {
      const deadline = Date.now() + 10_000;
      while (setup.held.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      for (const res of setup.held.splice(0))
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"done":true}');
    },
  } as WorkerOnDemand;

  beforeAll(async () => {
    setup.t = await startTestApp({ runWorker: false });
    setup.target = await startHttpTarget((req, res) => {
      if (!answer(req, res)) setup.held.push(res);
    });
    setup.owner = await makeUser();
    setup.other = await makeUser();
  });
  afterAll(async () => {
    for (const res of setup.held) res.destroy();
    await worker?.close();
    await setup.target.close();
    await setup.t.close();
  });
  return setup;
}
