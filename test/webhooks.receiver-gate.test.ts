import { ReceiverGate, type Admitted } from '../src/webhooks/receivers';

function gate() {
  const clock = { now: 1_000_000 };
  const g = new ReceiverGate({
    concurrency: 2,
    failuresToOpen: 3,
    openMs: 30_000,
    now: () => clock.now,
    random: () => 0,
  });
  return { g, clock };
}

const admitted = (ticket: ReturnType<ReceiverGate['admit']>): Admitted => {
  if (!ticket.admitted) throw new Error('expected the attempt to be admitted');
  return ticket;
};

test('admits at most `concurrency` attempts per receiver (scheme, host and port); other receivers are not affected', () => {
  const { g } = gate();
  const first = admitted(g.admit('http://slow.example:8080/a'));
  admitted(g.admit('http://SLOW.example:8080/b'));
  const third = g.admit('http://slow.example:8080/c');
  expect(third).toMatchObject({ admitted: false, breaker: false });
  expect(g.admit('http://slow.example:9090/a').admitted).toBe(true);
  expect(g.admit('https://slow.example:8080/a').admitted).toBe(true);
  first.done(true);
  expect(g.admit('http://slow.example:8080/c').admitted).toBe(true);
});

test('opens the breaker after the unanswered attempts in a row, probes once when it ends, and doubles the wait when the probe fails', () => {
  const { g, clock } = gate();
  const url = 'http://silent.example/hook';
  for (let i = 0; i < 3; i++) admitted(g.admit(url)).done(false);
  const open = g.admit(url);
  expect(open).toMatchObject({ admitted: false, breaker: true });
  expect(!open.admitted && open.retryAt.getTime()).toBe(clock.now + 30_000);
  expect(!open.admitted && open.putOff).toEqual({ from: new Date(clock.now + 30_000), spreadMs: 30_000 });

  clock.now += 30_000;
  const probe = admitted(g.admit(url));
  expect(g.admit(url)).toMatchObject({ admitted: false, breaker: true });
  probe.done(false);
  const reopened = g.admit(url);
  expect(!reopened.admitted && reopened.retryAt.getTime()).toBe(clock.now + 60_000);

  clock.now += 60_000;
  admitted(g.admit(url)).done(true);
  admitted(g.admit(url));
  admitted(g.admit(url));
});

test('an answer of any status resets the count of unanswered attempts', () => {
  const { g } = gate();
  const url = 'http://flaky.example/hook';
  admitted(g.admit(url)).done(false);
  admitted(g.admit(url)).done(false);
  admitted(g.admit(url)).done(true);
  admitted(g.admit(url)).done(false);
  admitted(g.admit(url)).done(false);
  expect(g.admit(url).admitted).toBe(true);
});

test("one user's attempts hold at most `userConcurrency` slots over all receivers; others are not affected, and the user's due messages are put off together at most once a second", () => {
  const clock = { now: 1_000_000 };
  const g = new ReceiverGate({
    concurrency: 2,
    userConcurrency: 3,
    failuresToOpen: 3,
    openMs: 30_000,
    now: () => clock.now,
    random: () => 0,
  });
  const held = [1, 2, 3].map((i) => admitted(g.admit(`http://silent-${i}.example/hook`, 'user-a')));
  expect(g.inFlightOf('user-a')).toBe(3);
  const full = g.admit('http://silent-4.example/hook', 'user-a');
  expect(full).toMatchObject({
    admitted: false,
    breaker: false,
    by: 'user',
    user: 'user-a',
    receiver: 'http://silent-4.example',
  });
  expect(!full.admitted && full.retryAt.getTime()).toBe(clock.now + 1_000);
  expect(!full.admitted && full.putOff).toEqual({ from: new Date(clock.now + 1_000), spreadMs: 9_000 });
  // Put off together once a second, not at each message.
  const again = g.admit('http://silent-5.example/hook', 'user-a');
  expect(!again.admitted && again.putOff).toBeUndefined();
  // Another user, and messages of no known user, go on (to the same receivers too).
  admitted(g.admit('http://silent-4.example/hook', 'user-b'));
  admitted(g.admit('http://silent-1.example/hook', 'user-b'));
  admitted(g.admit('http://silent-6.example/hook'));
  // A busy receiver is still the receiver's doing.
  expect(g.admit('http://silent-1.example/hook', 'user-c')).toMatchObject({ admitted: false, by: 'receiver' });
  held[0].done(false);
  expect(g.inFlightOf('user-a')).toBe(2);
  admitted(g.admit('http://silent-4.example/hook', 'user-a'));
  clock.now += 1_000;
  const later = g.admit('http://silent-5.example/hook', 'user-a');
  expect(!later.admitted && later.putOff).toEqual({ from: new Date(clock.now + 1_000), spreadMs: 9_000 });
});
