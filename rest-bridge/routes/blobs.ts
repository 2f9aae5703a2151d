import type { Route } from '../route';
import { uidParam } from '../schemas';

const tag = 'Blobs';

/** Spec 4.5: metadata and download only; uploads and listing happen in the settings web. */
export const blobRoutes: Route[] = [
  {
    method: 'GET',
    path: '/blobs/:uid',
    operation: 'GetBlob',
    summary: 'Blob metadata; blob_type and path only for admin tokens. Each call counts in total_reads',
    auth: 'optional',
    tag,
    params: { uid: uidParam('Blob') },
    variables: ({ params }) => ({ uid: params.uid }),
    result: 'blob',
    // Spec 2.6: these two are *included* only for admin tokens, not sent as null to others.
    omitWhenNull: ['blob_type', 'path'],
  },
  {
    method: 'GET',
    path: '/blobs/:uid/download',
    operation: 'GetBlobDownloadUrl',
    summary: 'Redirects (302) to a signed, expiring URL of the content',
    auth: 'optional',
    tag,
    params: { uid: uidParam('Blob') },
    variables: ({ params }) => ({ uid: params.uid }),
    result: 'blobDownloadUrl',
    shape: 'redirect',
  },
];
