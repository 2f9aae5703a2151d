import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase } from './support/database';
import { spawnServiceProcess } from './support/run-factories';

jest.setTimeout(90_000);

test('a worker with WORKER_HEARTBEAT_FILE rewrites it while its job store answers and removes it when it stops', async () => {
  const database = await createTestDatabase();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'circuits-heartbeat-'));
  const file = path.join(dir, 'worker-heartbeat.json');
  const worker = await spawnServiceProcess('worker', database.url, { WORKER_HEARTBEAT_FILE: file, PORT: 'not-a-port' });
  try {
    const deadline = Date.now() + 15_000;
    while (!fs.existsSync(file) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const beat = JSON.parse(fs.readFileSync(file, 'utf8')) as { pid: number; at: string };
    expect(beat.pid).toBe(worker.proc.pid);
    expect(Date.now() - Date.parse(beat.at)).toBeLessThan(15_000);
    await worker.kill('SIGTERM');
    expect(fs.existsSync(file)).toBe(false);
  } finally {
    await worker.kill('SIGKILL');
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
