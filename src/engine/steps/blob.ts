import { Blob } from '../../models/blobs';
import { isUid } from '../../ids';
import { renderTemplate, templateFailure } from '../render';
import { templateField } from './field-schemas';
import { defineStepKind, sandboxCall, StepError, throughGate, templateScope } from './types';

/** `application/json`, `text/json` and any `+json` type. */
export function isJsonMimeType(mimeType: string | null | undefined): boolean {
  if (!mimeType) return false;
  const essence = mimeType.split(';')[0].trim().toLowerCase();
  return essence === 'application/json' || essence === 'text/json' || essence.endsWith('+json');
}

/**
 * `blob`: the content of a stored blob. `blob_uid` is a template over `{input, steps}`;
 * the output is the content as UTF-8 text, JSON-parsed when the blob's MIME type is JSON. Reading
 * content is not a metadata read: total_reads is unchanged.
 */
export const blobStep = defineStepKind({
  kind: 'blob',
  durable: true,
  summary: 'Reads a stored blob; the output is its content as text, parsed when the blob is JSON.',
  fields: { blob_uid: templateField('The uid of the blob.') },
  required: ['blob_uid'],
  async execute(step, ctx) {
    if (typeof step.blob_uid !== 'string') throw new StepError(step.id, 'blob_uid must be a string');
    let uid: string;
    try {
      uid = (await renderTemplate(step.blob_uid, templateScope(ctx), sandboxCall(ctx))).trim();
    } catch (error) {
      throw new StepError(step.id, `blob_uid: ${templateFailure(error)}`);
    }
    return throughGate(ctx, { blob_uid: uid }, async () => {
      const blob = isUid(uid) ? await Blob.findByPk(uid) : null;
      if (!blob) throw new StepError(step.id, `no blob has the uid "${uid.slice(0, 100)}"`);
      if (ctx.signal.aborted) throw new StepError(step.id, 'aborted');

      let content: Buffer;
      try {
        content = await ctx.deps.blobStorage.read(blob.uid);
      } catch (error) {
        ctx.deps.log.warn({ err: error, blob: blob.uid }, 'blob step could not read content');
        throw new StepError(step.id, `reading blob ${blob.uid} failed`);
      }
      const text = content.toString('utf8');
      if (!isJsonMimeType(blob.mime_type)) return { output: text, credits: 0 };
      try {
        return { output: JSON.parse(text) as unknown, credits: 0 };
      } catch (error) {
        throw new StepError(step.id, `blob ${blob.uid} is not valid JSON: ${(error as Error).message}`);
      }
    });
  },
  describe: (step, say) => `Reads the stored file (blob) ${say.quote(String(step.blob_uid))}`,
});
