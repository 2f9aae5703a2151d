import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A chat request as an agent step sends it. */
export interface AgentModelRequest {
  model: string;
  messages: {
    role: string;
    content: string | null;
    tool_call_id?: string;
    tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  }[];
  tools?: { type: string; function: { name: string; description?: string; parameters: Record<string, unknown> } }[];
  temperature?: number;
  max_tokens?: number;
  stream?: boolean;
}

/** What the scripted model answers: text, tool calls (arguments as text, as a model sends them), usage. */
export interface ScriptedReply {
  content?: string;
  tool_calls?: { id?: string; name: string; arguments: string }[];
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** An error answer instead. */
  status?: number;
}

/**
 * An OpenAI-compatible chat-completions server on loopback that streams scripted replies, tool calls
 * included (as OpenAI streams them: an id and name first, then the arguments in pieces). `script(request, i)`
 * decides the i-th request's reply (0-based). `baseUrl` is what OPENAI_BASE_URL takes.
 */
export async function startScriptedModel(script: (request: AgentModelRequest, index: number) => ScriptedReply) {
  const requests: AgentModelRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString()) as AgentModelRequest;
      requests.push(body);
      const reply = script(body, requests.length - 1);
      if (reply.status) {
        res
          .writeHead(reply.status, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'scripted failure', type: 'server_error' } }));
        return;
      }
      const id = `chatcmpl-${requests.length}`;
      const created = Math.floor(Date.now() / 1000);
      const chunk = (delta: Record<string, unknown>, finish: string | null) =>
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      const out: string[] = [chunk({ role: 'assistant', content: reply.tool_calls ? null : '' }, null)];
      if (reply.content)
        for (let i = 0; i < reply.content.length; i += 16)
          out.push(chunk({ content: reply.content.slice(i, i + 16) }, null));
      (reply.tool_calls ?? []).forEach((call, index) => {
        out.push(
          chunk(
            {
              tool_calls: [
                {
                  index,
                  id: call.id ?? `call_${requests.length}_${index}`,
                  type: 'function',
                  function: { name: call.name, arguments: '' },
                },
              ],
            },
            null,
          ),
        );
        for (let i = 0; i < call.arguments.length; i += 8)
          out.push(chunk({ tool_calls: [{ index, function: { arguments: call.arguments.slice(i, i + 8) } }] }, null));
      });
      out.push(chunk({}, reply.tool_calls ? 'tool_calls' : 'stop'));
      const usage = reply.usage ?? { prompt_tokens: 500, completion_tokens: 100 };
      out.push(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } })}\n\n`,
      );
      out.push('data: [DONE]\n\n');
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(out.join(''));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
