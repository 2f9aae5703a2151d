import type { User } from '../models';

/** A private profile is seen only by its owner and admins; search never shows it (spec §4.4). */
export function profileVisible(viewer: User | null, user: User): boolean {
  return !user.is_private || viewer?.uid === user.uid || viewer?.is_admin === true;
}
