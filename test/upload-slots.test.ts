import { createUploadSlots, type ReleaseSlot } from '../src/web/settings/upload-slots';

const settle = () => new Promise((resolve) => setImmediate(resolve));

test('at most perUser of one owner and total in all; the rest wait, then are admitted as slots free', async () => {
  const slots = createUploadSlots({ perUser: 2, total: 3, waitingPerUser: 10 });
  const granted: string[] = [];
  const releases: ReleaseSlot[] = [];
  const ask = (owner: string) =>
    void slots.acquire(owner).then((release) => {
      granted.push(owner);
      releases.push(release!);
    });
  ['a', 'a', 'a', 'a', 'b', 'b', 'c'].forEach(ask);
  await settle();
  // a's third and fourth wait for a's slots; b takes the last slot of the total; b's second and c wait.
  expect(granted).toEqual(['a', 'a', 'b']);
  expect(slots.active()).toBe(3);

  releases[0]();
  await settle();
  // A freed slot goes to the first owner in turn who may take it, who then goes to the back: a, then b, then c.
  expect(granted).toEqual(['a', 'a', 'b', 'a']);
  releases[1]();
  await settle();
  expect(granted).toEqual(['a', 'a', 'b', 'a', 'b']);
  releases[2]();
  await settle();
  expect(granted).toEqual(['a', 'a', 'b', 'a', 'b', 'c']);
  releases[2]();
  expect(slots.active()).toBe(3);
});

test('one more waiting upload than waitingPerUser is refused (null); a release counts once', async () => {
  const slots = createUploadSlots({ perUser: 1, total: 1, waitingPerUser: 1 });
  const first = (await slots.acquire('a'))!;
  const second = slots.acquire('a');
  expect(await slots.acquire('a')).toBeNull();
  const other = slots.acquire('b');
  first();
  first();
  expect(slots.active()).toBe(1);
  (await second)!();
  (await other)!();
  expect(slots.active()).toBe(0);
});
