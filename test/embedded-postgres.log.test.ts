import { noteworthy } from '../src/db/postgres-server';

/** Which lines of the embedded PostgreSQL's log reach the service log as warnings. */
describe('embedded PostgreSQL log lines', () => {
  it('keeps an expected refusal (a duplicate name answered 409) out of the service log', () => {
    expect(
      noteworthy(
        '2026-11-26 04:50:01.123 UTC [4242] <client backend> 23505 ERROR:  duplicate key value violates unique constraint "circuits_owner_name"',
      ),
    ).toBeNull();
    expect(
      noteworthy(
        '2026-11-26 04:50:01.123 UTC [4242] <client backend> 57014 ERROR:  canceling statement due to user request',
      ),
    ).toBeNull();
  });

  it('reports the server’s own complaints, without the prefix', () => {
    expect(
      noteworthy('2026-11-26 04:50:01.123 UTC [17] <autovacuum worker> XX000 ERROR:  could not open file "base/1/2"'),
    ).toBe('ERROR:  could not open file "base/1/2"');
    expect(
      noteworthy(
        '2026-11-26 04:50:01.123 UTC [18] <checkpointer> 00000 WARNING:  checkpoints are occurring too frequently',
      ),
    ).toBe('WARNING:  checkpoints are occurring too frequently');
    expect(
      noteworthy('2026-11-26 04:50:01.123 UTC [19] <client backend> 53300 FATAL:  sorry, too many clients already'),
    ).toBe('FATAL:  sorry, too many clients already');
  });

  it('ignores routine lines and outages the supervisor reports itself', () => {
    expect(
      noteworthy(
        '2026-11-26 04:50:01.123 UTC [1] <postmaster> 00000 LOG:  database system is ready to accept connections',
      ),
    ).toBeNull();
    expect(
      noteworthy(
        '2026-11-26 04:50:01.123 UTC [20] <client backend> 57P01 FATAL:  terminating connection because of crash of another server process',
      ),
    ).toBeNull();
  });
});
