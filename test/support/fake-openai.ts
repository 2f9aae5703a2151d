import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeChatRequest {
  model: string;
  messages: { role: string; content: string }[];
  temperature?: number;
  max_tokens?: number;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
}

/** An error answer: `{"error": {"message", "type"}}` with `status` and `headers`. */
export interface FakeFailure {
  status: number;
  message?: string;
  headers?: Record<string, string>;
}

/**
 * An OpenAI-compatible chat-completions server on loopback: POST /v1/chat/completions answers with
 * `reply(request)` and a usage block; with `"stream": true` as server-sent events, one chunk per
 * `chunkSize` characters every `chunkDelayMs`, then the usage chunk (when `stream_options.include_usage`)
 * and `data: [DONE]`. `baseUrl` is what OPENAI_BASE_URL takes. `open` counts requests still in flight.
 */
export async function startFakeOpenAI(
  options: {
    reply?: (request: FakeChatRequest) => string;
    /** The usage reported, fixed or per request (default 1200 + 300). */
    usage?:
      | { prompt_tokens: number; completion_tokens: number }
      | ((request: FakeChatRequest) => { prompt_tokens: number; completion_tokens: number });
    status?: number;
    /** Models answered with HTTP 400 (a non-retried failure). */
    failModels?: string[];
    /** Characters per streamed chunk (default 4). */
    chunkSize?: number;
    /** Pause between streamed chunks (default 0). */
    chunkDelayMs?: number;
    /** Answers a request with an error instead (e.g. 500 on the first request only); undefined: answer normally. */
    fail?: (request: FakeChatRequest, info: { index: number; authorization?: string }) => FakeFailure | undefined;
  } = {},
) {
  const requests: { body: FakeChatRequest; authorization?: string }[] = [];
  const state = { open: 0, aborted: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString()) as FakeChatRequest;
      requests.push({ body, authorization: req.headers.authorization });
      const failure = options.fail?.(body, { index: requests.length - 1, authorization: req.headers.authorization });
      if (failure) {
        res
          .writeHead(failure.status, { 'content-type': 'application/json', ...failure.headers })
          .end(JSON.stringify({ error: { message: failure.message ?? 'fake failure', type: 'server_error' } }));
        return;
      }
      const status = options.failModels?.includes(body.model) ? 400 : options.status;
      if (status && status !== 200) {
        res
          .writeHead(status, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'fake failure', type: 'server_error' } }));
        return;
      }
      const content = options.reply ? options.reply(body) : `echo: ${body.messages.at(-1)?.content ?? ''}`;
      const usage =
        typeof options.usage === 'function'
          ? options.usage(body)
          : (options.usage ?? { prompt_tokens: 1200, completion_tokens: 300 });
      const totals = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
      const id = `chatcmpl-${requests.length}`;
      const created = Math.floor(Date.now() / 1000);
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id,
            object: 'chat.completion',
            created,
            model: body.model,
            choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
            usage: totals,
          }),
        );
        return;
      }
      state.open++;
      let ended = false;
      const end = () => {
        if (!ended) {
          ended = true;
          state.open--;
        }
      };
      res.on('close', () => {
        if (!res.writableFinished) state.aborted++;
        end();
      });
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
      const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
        id,
        object: 'chat.completion.chunk',
        created,
        model: body.model,
        choices: [{ index: 0, delta, finish_reason: finish }],
      });
      const size = options.chunkSize ?? 4;
      const pieces: string[] = [];
      for (let i = 0; i < content.length; i += size) pieces.push(content.slice(i, i + size));
      send(chunk({ role: 'assistant', content: '' }, null));
      let next = 0;
      const step = () => {
        if (res.destroyed) return;
        if (next < pieces.length) {
          send(chunk({ content: pieces[next++] }, null));
          setTimeout(step, options.chunkDelayMs ?? 0);
          return;
        }
        send(chunk({}, 'stop'));
        if (body.stream_options?.include_usage)
          send({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage: totals });
        res.end('data: [DONE]\n\n');
        end();
      };
      step();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    /** Streams in flight, and streams the client closed before the end. */
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
