import { Field, ID, Int, ObjectType } from 'type-graphql';
import type { User } from '../../models';
import type { Blob as BlobModel } from '../../models/blobs';
import { blobView } from '../../views/blob.view';

@ObjectType('Blob', { description: 'A stored file' })
export class BlobType {
  @Field(() => ID) uid!: string;
  @Field(() => String, {
    nullable: true,
    description: 'Storage backend code (gcs or local); null unless the caller is an admin',
  })
  blobType!: string | null;
  @Field(() => String, { nullable: true, description: '<scheme>://<bucket>/<uid>; null unless the caller is an admin' })
  path!: string | null;
  @Field(() => String, { description: 'SHA-256 of the content, hex' }) hash!: string;
  @Field(() => ID, { description: "The uploader's uid" }) userUid!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Boolean, { description: 'Whether the caller may delete the blob' }) canDelete!: boolean;
  @Field(() => Int, { description: 'Size in bytes' }) bytes!: number;
  @Field(() => Int, { description: 'How many times the metadata has been fetched' }) totalReads!: number;
  @Field(() => String, { nullable: true, description: 'Inferred MIME type, when detectable' }) mimeType!: string | null;
  @Field(() => String, { description: 'The uploaded file name' }) filename!: string;

  static from(blob: BlobModel, viewer: User | null): BlobType {
    return Object.assign(new BlobType(), blobView(blob, viewer));
  }
}
