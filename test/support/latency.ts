/** Latencies of one sequential client: GETs `url` again and again until stopped. */
export function probe(url: string, init: RequestInit = {}) {
  const latencies: number[] = [];
  const statuses: number[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const started = performance.now();
      const res = await fetch(url, init);
      await res.arrayBuffer();
      latencies.push(performance.now() - started);
      statuses.push(res.status);
    }
  })();
  return {
    latencies,
    statuses,
    async stop() {
      running = false;
      await done;
      return { latencies, statuses, p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95), max: Math.max(...latencies) };
    },
  };
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
}

/** Runs `work` for every item, starting one every `intervalMs` (an arrival rate, not a flood), and waits for all. */
export async function paced<T, R>(items: T[], intervalMs: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const started: Promise<R>[] = [];
  for (const [index, item] of items.entries()) {
    started.push(work(item, index));
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return Promise.all(started);
}
