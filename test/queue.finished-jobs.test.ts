import { finishedJobs } from '../src/queue/finished-jobs';

/** The run jobs that ended share DELETE statements (src/queue/finished-jobs.ts). */
describe('finished run jobs', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('are deleted many per statement: the jobs that end within the delay share one DELETE', async () => {
    const statements: unknown[][] = [];
    const jobs = finishedJobs({
      query: async (_text, values) => {
        statements.push(values);
      },
      table: 'agenda_jobs',
      jobName: 'execute-run',
      onError: (error) => {
        throw error;
      },
      delayMs: 50,
    });
    for (let i = 0; i < 20; i++) jobs.add(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    expect(statements).toHaveLength(0);
    await jest.advanceTimersByTimeAsync(50);
    expect(statements).toHaveLength(1);
    expect(statements[0][1] as string[]).toHaveLength(20);
  });

  it('never holds more than maxBatch for one statement, and flush() sends what waits at once', async () => {
    const sizes: number[] = [];
    const jobs = finishedJobs({
      query: async (_text, values) => {
        sizes.push((values[1] as string[]).length);
      },
      table: 'agenda_jobs',
      jobName: 'execute-run',
      onError: (error) => {
        throw error;
      },
      maxBatch: 8,
    });
    for (let i = 0; i < 20; i++) jobs.add(String(i));
    await jobs.flush();
    expect(sizes).toEqual([8, 8, 4]);
  });

  it('reports a failed DELETE without throwing (the job lock expires and the run is finished again)', async () => {
    const errors: Error[] = [];
    const jobs = finishedJobs({
      query: async () => {
        throw new Error('connection lost');
      },
      table: 'agenda_jobs',
      jobName: 'execute-run',
      onError: (error) => errors.push(error),
    });
    jobs.add('a');
    await jobs.flush();
    expect(errors.map((e) => e.message)).toEqual(['connection lost']);
  });
});
