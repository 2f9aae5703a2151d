/** An event stream being read as it arrives: what came so far, and when it ended. */
export interface Followed {
  status: number;
  /** Everything received so far. */
  text(): string;
  /** Resolves once the text contains `needle`. */
  until(needle: string, timeoutMs?: number): Promise<void>;
  /** Resolves (with Date.now()) when the server ended the stream or the connection. */
  ended: Promise<number>;
  abort(): void;
}

/** Opens `url` with fetch and reads the body as it comes (REST SSE or graphql-sse). */
export async function follow(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Followed> {
  const controller = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream', ...init.headers };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: controller.signal,
  });
  let text = '';
  const waiters: (() => void)[] = [];
  const ended = (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        for (const wake of waiters.splice(0)) wake();
      }
    } catch {
      /* reset or aborted: ended all the same */
    }
    for (const wake of waiters.splice(0)) wake();
    return Date.now();
  })();
  let isEnded = false;
  void ended.then(() => {
    isEnded = true;
  });
  return {
    status: res.status,
    text: () => text,
    ended,
    abort: () => controller.abort(),
    async until(needle, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!text.includes(needle)) {
        if (isEnded) throw new Error(`stream ended without "${needle}": ${text.slice(0, 500)}`);
        if (Date.now() > deadline) throw new Error(`no "${needle}" within ${timeoutMs} ms: ${text.slice(0, 500)}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    },
  };
}
