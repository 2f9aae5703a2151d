import { Arg, Ctx, Directive, ID, Query, Resolver } from 'type-graphql';
import { Blob } from '../../models/blobs';
import { notFound } from '../../errors';
import { authorize } from '../../policies/authorize';
import { blobPermits } from '../../policies/blob.policy';
import { isUid } from '../../ids';
import type { AppContext } from '../context';
import { BlobType } from './blob.type';

@Resolver(() => BlobType)
export class BlobResolver {
  @Directive('@cost(weight: 100)')
  @Query(() => BlobType, { description: 'A blob by uid; each call counts as one read in totalReads' })
  async blob(@Arg('uid', () => ID) uid: string, @Ctx() ctx: AppContext): Promise<BlobType> {
    const blob = isUid(uid) ? await Blob.recordRead(uid) : null;
    if (!blob) throw notFound('Blob');
    authorize(ctx.viewer, blobPermits(ctx.viewer, blob, 'read'));
    return BlobType.from(blob, ctx.viewer);
  }

  @Query(() => String, { description: "A signed, expiring URL of the blob's content" })
  async blobDownloadUrl(@Arg('uid', () => ID) uid: string, @Ctx() ctx: AppContext): Promise<string> {
    const blob = isUid(uid) ? await Blob.findByPk(uid) : null;
    if (!blob) throw notFound('Blob');
    authorize(ctx.viewer, blobPermits(ctx.viewer, blob, 'read'));
    return ctx.services.blobStorage.signedUrl(blob.uid, { baseUrl: ctx.baseUrl });
  }
}
