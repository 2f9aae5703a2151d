import type http from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../logger';

/**
 * Drops connections whose reader has stopped reading: a socket with bytes waiting to be sent that
 * has taken none of them for `stallMs` is destroyed, whatever the response (an event stream, a
 * large run), and the drop is logged. With paced writes (src/paced-write.ts) a paused reader holds at
 * most a slice until then. One sweep a second for the whole server; returns the function that stops it.
 */
export function dropStalledReaders(server: http.Server, stallMs: number, log?: Logger): () => void {
  const watched = new Map<Socket, { written: number; since: number }>();
  server.on('connection', (socket: Socket) => {
    watched.set(socket, { written: 0, since: Date.now() });
    socket.once('close', () => watched.delete(socket));
  });
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [socket, seen] of watched) {
        // bytesWritten counts what is still buffered too: taken by the peer is the difference.
        const taken = socket.bytesWritten - socket.writableLength;
        if (socket.writableLength === 0 || taken !== seen.written) {
          seen.written = taken;
          seen.since = now;
        } else if (now - seen.since >= stallMs) {
          watched.delete(socket);
          // The record of the drop (a reader's port says which connection it was).
          log?.info(
            { remotePort: socket.remotePort, unsent: socket.writableLength, stalledMs: now - seen.since },
            'dropped a reader that took nothing of its answer',
          );
          socket.destroy();
        }
      }
    },
    Math.min(1_000, stallMs),
  ).unref();
  return () => clearInterval(sweep);
}
