import crypto from 'node:crypto';
import type { Writable } from 'node:stream';

/** The most of one text handed to a socket at once: a paused reader holds at most about this much. */
export const WRITE_SLICE_CHARS = 64 * 1024;

/** Resolves once `out` wants more (drain) or is gone (close, error). */
function drained(out: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done).off('close', done).off('error', done);
      resolve();
    };
    out.on('drain', done).on('close', done).on('error', done);
  });
}

/**
 * Identical large texts (the same run's 4 MiB result sent to many readers) share one copy while any
 * reader still writes it: a paused reader then costs its slice in the socket, not a copy of the text.
 */
export class SharedTexts {
  private readonly texts = new Map<string, WeakRef<{ text: string }>>();
  private readonly forget = new FinalizationRegistry<string>((key) => {
    if (!this.texts.get(key)?.deref()) this.texts.delete(key);
  });

  /** The shared holder of `text` (keep it referenced while writing). */
  share(text: string): { text: string } {
    const key = crypto.createHash('sha256').update(text).digest('base64');
    const known = this.texts.get(key)?.deref();
    if (known) return known;
    const holder = { text };
    this.texts.set(key, new WeakRef(holder));
    this.forget.register(holder, key);
    return holder;
  }
}

/**
 * Writes `text` with back-pressure: slice by slice, each only once the socket has taken the one
 * before. Resolves false when the connection went away before all of it was written.
 */
export async function writePaced(out: Writable, text: string, shared?: SharedTexts): Promise<boolean> {
  if (out.destroyed || out.writableEnded) return false;
  if (text.length <= WRITE_SLICE_CHARS) {
    if (!out.write(text)) await drained(out);
    return !out.destroyed;
  }
  const holder = shared ? shared.share(text) : { text };
  // This frame's own copy may go now; `holder` keeps the (shared) one alive until written.
  text = '';
  const all = holder.text;
  for (let at = 0; at < all.length;) {
    if (out.destroyed || out.writableEnded) return false;
    let to = Math.min(at + WRITE_SLICE_CHARS, all.length);
    // Never between the halves of a surrogate pair (each half alone would be written as U+FFFD).
    if (to < all.length && /[\uD800-\uDBFF]/.test(all[to - 1])) to--;
    const more = out.write(all.slice(at, to));
    at = to;
    if (!more) await drained(out);
  }
  return !out.destroyed;
}
