import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeChatRequest { model: string; messages: { role: string; content: string }[]; temperature?: number; max_tokens?: number }

/**
 * An OpenAI-compatible chat-completions server on loopback: POST /v1/chat/completions answers with
 * `reply(request)` and a usage block. `baseUrl` is what OPENAI_BASE_URL takes.
 */
export async function startFakeOpenAI(options: {
  reply?: (request: FakeChatRequest) => string;
  usage?: { prompt_tokens: number; completion_tokens: number };
  status?: number;
  /** Models answered with HTTP 400 (a non-retried failure). */
  failModels?: string[];
} = {}) {
  const requests: { body: FakeChatRequest; authorization?: string }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString()) as FakeChatRequest;
      requests.push({ body, authorization: req.headers.authorization });
      const status = options.failModels?.includes(body.model) ? 400 : options.status;
      if (status && status !== 200) {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'fake failure', type: 'server_error' } }));
        return;
      }
      const content = options.reply ? options.reply(body) : `echo: ${body.messages.at(-1)?.content ?? ''}`;
      const usage = options.usage ?? { prompt_tokens: 1200, completion_tokens: 300 };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
