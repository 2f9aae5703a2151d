import type { Migration } from './index';

export const runs: Migration = {
  name: '0002-runs',
  up: ``,
};
