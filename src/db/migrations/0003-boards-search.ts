import type { Migration } from './index';

export const boards: Migration = {
  name: '0003-boards-search',
  up: ``,
};
