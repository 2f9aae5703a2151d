import { isPublicAddress, resolvePublicTarget } from '../src/engine/net-guard';

test.each([
  // IPv4 that is not global unicast
  '127.0.0.1',
  '10.1.2.3',
  '172.16.5.4',
  '192.168.0.1',
  '169.254.169.254',
  '100.64.0.1',
  '0.0.0.0',
  '255.255.255.255',
  '224.0.0.1',
  '240.0.0.1',
  '192.0.2.1',
  '198.18.0.1',
  '192.0.0.8',
  // IPv6 that is not global unicast
  '::1',
  '::',
  'fe80::1',
  'fd00::1',
  'fec0::1',
  'ff02::1',
  '2001:db8::1',
  '100::1',
  '3fff::1',
  // IPv6 forms carrying a non-public IPv4
  '::ffff:127.0.0.1',
  '::ffff:10.0.0.1',
  '::127.0.0.1',
  '::ffff:0:127.0.0.1',
  '2002:7f00:1::',
  '2002:a9fe:a9fe::1',
  '64:ff9b::7f00:1',
  '64:ff9b::a00:1',
  '64:ff9b:1::a00:1',
  // Teredo whose client (XOR-ed) is 127.0.0.1, and whose server is private
  '2001:0:4136:e378:8000:63bf:80ff:fffe',
  '2001:0:a00:1::1',
])('refuses %s', (address) => {
  expect(isPublicAddress(address)).toBe(false);
});

test.each([
  '8.8.8.8',
  '1.1.1.1',
  '2606:4700:4700::1111',
  '2a00:1450:4001:80b::200e',
  // IPv6 forms carrying a public IPv4 are judged by it
  '::ffff:8.8.8.8',
  '2002:808:808::1',
  '64:ff9b::808:808',
])('admits %s', (address) => {
  expect(isPublicAddress(address)).toBe(true);
});

test('not an address at all is refused', () => {
  expect(isPublicAddress('localhost')).toBe(false);
  expect(isPublicAddress('')).toBe(false);
});

test.each([
  'http://[::127.0.0.1]/',
  'http://[2002:7f00:1::]/',
  'http://[::ffff:7f00:1]/',
  'http://2130706433/',
  'http://0x7f.1/',
  'http://localhost/',
])('a URL to %s is refused, naming the host as written (never what a name resolved to)', async (raw) => {
  const error = await resolvePublicTarget(new URL(raw), false).catch((e: Error) => e);
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).message).toMatch(/^refusing to call .+: it is not a public address/);
  if (raw.includes('localhost'))
    expect((error as Error).message).toBe(
      'refusing to call localhost: it is not a public address (private, loopback, link-local or reserved)',
    );
});
