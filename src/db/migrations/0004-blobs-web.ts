import type { Migration } from './index';

export const blobs: Migration = {
  name: '0004-blobs-web',
  up: ``,
};
