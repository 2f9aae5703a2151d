import { QueryTypes } from 'sequelize';
import type { User } from '../src/models';
import { profileVisible, visibleProfilesSql } from '../src/policies/user.policy';
import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { cellsOf } from './support/policy-table';

/**
 * The profile policy as a table: role × visibility × action → what the caller gets (`profile`:
 * GraphQL `user` answers it rather than null; `search`: REST search lists it). A private profile is
 * its user's and admins'; search answers every caller alike, so it never lists one, not even to its
 * user. Then the SQL form against the predicate, on PostgreSQL.
 */
type Role = 'anonymous' | 'other' | 'self' | 'admin';
type Visibility = 'public' | 'private';
type Action = 'profile' | 'search';
type Row = Record<Action, boolean>;

const TABLE: Record<Visibility, Record<Role, Row>> = {
  public: {
    anonymous: { profile: true, search: true },
    other: { profile: true, search: true },
    self: { profile: true, search: true },
    admin: { profile: true, search: true },
  },
  private: {
    anonymous: { profile: false, search: false },
    other: { profile: false, search: false },
    self: { profile: true, search: false },
    admin: { profile: true, search: false },
  },
};

let t: TestApp;
let other: TestUser;
let admin: TestUser;
const profiles = {} as Record<Visibility, TestUser>;

beforeAll(async () => {
  t = await startTestApp({ searchRateLimitPerMinute: 100_000 });
  profiles.public = await makeUser();
  profiles.private = await makeUser({ isPrivate: true });
  other = await makeUser();
  admin = await makeUser({ isAdmin: true });
});
afterAll(async () => {
  await t.close();
});

function tokenOf(role: Role, visibility: Visibility): string | undefined {
  switch (role) {
    case 'anonymous':
      return undefined;
    case 'self':
      return profiles[visibility].token;
    case 'other':
      return other.token;
    case 'admin':
      return admin.token;
  }
}

async function perform(action: Action, profile: TestUser, token: string | undefined): Promise<boolean> {
  switch (action) {
    case 'profile': {
      const res = await t.gql('query($u: String!) { user(username: $u) { username } }', { u: profile.username }, token);
      expect(res.errors).toBeUndefined();
      return res.data.user !== null;
    }
    case 'search': {
      const res = await t.rest('GET', `/search?search=${profile.username}&type=users`, { token });
      expect(res.status).toBe(200);
      return res.body.data.some((item: { username: string }) => item.username === profile.username);
    }
  }
}

const cases = cellsOf(TABLE);

test.each(cases)('%s profile, %s caller, %s → %p', async (visibility, role, action, expected) => {
  expect(await perform(action, profiles[visibility], tokenOf(role, visibility))).toBe(expected);
});

test.each(['anonymous', 'other', 'self', 'admin'] as Role[])(
  '%s: visibleProfilesSql shows what profileVisible allows',
  async (role) => {
    const viewer: User | null =
      role === 'anonymous'
        ? null
        : role === 'self'
          ? profiles.private.user
          : role === 'other'
            ? other.user
            : admin.user;
    const candidates = [profiles.public.user, profiles.private.user, ...(viewer ? [viewer] : [])];
    const visible = visibleProfilesSql('u', viewer);
    const rows = await t.app.services.sequelize.query<{ uid: string }>(
      `SELECT u.uid FROM users u WHERE u.uid IN (:uids) AND ${visible.sql}`,
      { type: QueryTypes.SELECT, replacements: { uids: candidates.map((u) => u.uid), ...visible.replacements } },
    );
    expect(rows.map((r) => r.uid).sort()).toEqual(
      [...new Set(candidates.filter((u) => profileVisible(viewer, u)).map((u) => u.uid))].sort(),
    );
  },
);
