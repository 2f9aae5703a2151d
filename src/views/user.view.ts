import type { User } from '../models';

/** The API view of a user's public profile (GraphQL's User). */
export function profileView(user: User) {
  return { uid: user.uid, username: user.username, name: user.name, bio: user.bio, createdAt: user.created_at };
}

/**
 * The API view of a user as they see themselves (GraphQL's Viewer, REST's `GET /users/me`, the CLI's
 * user): the profile plus what only they see. `balance`: read when shown, never off a cached viewer.
 */
export function viewerView(user: User, balance: { credits: number; held: number }) {
  return {
    ...profileView(user),
    isPrivate: user.is_private,
    isAdmin: user.is_admin,
    credits: balance.credits,
    creditsHeld: balance.held,
  };
}
