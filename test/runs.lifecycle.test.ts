import { RunLifecycle, type LifecycleRun } from '../src/runs/run-lifecycle';
import { createLogger } from '../src/logger';

const run: LifecycleRun = { uid: 'r1', user_uid: 'u1', webhook_events: ['step'] };

test('a subscriber that throws is logged and never reaches the run; the others still hear the event', () => {
  const log = createLogger('silent');
  const warn = jest.spyOn(log, 'warn');
  const lifecycle = new RunLifecycle(log);
  const heard: string[] = [];
  lifecycle.on('ended', () => {
    throw new Error('subscriber bug');
  });
  lifecycle.on('ended', (event) => heard.push(`${event.run.uid}:${event.state}`));
  expect(() =>
    lifecycle.emit('ended', { run, state: 'COMPLETED', attempt: 1, error: null, charged: 1, createdAt: null }),
  ).not.toThrow();
  expect(heard).toEqual(['r1:COMPLETED']);
  expect(warn).toHaveBeenCalledTimes(1);
});

test("step events go only to the subscribers that want the run's steps, and wantsSteps says whether any does", () => {
  const lifecycle = new RunLifecycle(createLogger('silent'));
  expect(lifecycle.wantsSteps(run)).toBe(false);
  const seqs: number[] = [];
  lifecycle.onStep(
    (r) => Boolean(r.webhook_events?.includes('step')),
    ({ event }) => seqs.push(event.seq),
  );
  expect(lifecycle.wantsSteps(run)).toBe(true);
  expect(lifecycle.wantsSteps({ ...run, webhook_events: null })).toBe(false);
  const event = {
    step_id: 's',
    kind: 'http',
    status: 'completed' as const,
    started_at: new Date().toISOString(),
    seq: 4,
  };
  lifecycle.emit('step', { run, event });
  lifecycle.emit('step', { run: { ...run, webhook_events: null }, event: { ...event, seq: 5 } });
  expect(seqs).toEqual([4]);
});
