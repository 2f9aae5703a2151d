import { badInput } from '../errors';

/** Circuit and board names: url-safe, 1-100 characters, starting with a letter or digit. */
export const RESOURCE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export function checkResourceName(name: string): void {
  if (!RESOURCE_NAME.test(name)) {
    throw badInput(
      'name must be 1-100 characters of letters, digits, ".", "_" or "-", starting with a letter or digit',
      { field: 'name' },
    );
  }
}
