import type { User } from '../models';
import { notAllowed, unauthorized } from '../errors';

/** Turns a policy's no into the right error: 401 for anonymous callers, 403 for everyone else. */
export function authorize(viewer: User | null, allowed: boolean, message?: string): void {
  if (allowed) return;
  if (!viewer) throw unauthorized();
  throw notAllowed(message);
}
