/**
 * Coalesces calls that would each cost a statement into one statement per batch, with one statement
 * in flight per key. The first call for an idle key goes at once (no timer: an idle service adds no
 * latency); calls that arrive while that statement runs wait and go together in the next. On this
 * kind of machine a round trip to PostgreSQL costs both processes more CPU than the work of a small
 * statement (each one wakes the other side), so under load this is most of what a write costs.
 *
 * A batch of several that fails is retried item by item, so one bad item fails only its own call.
 */
export interface StatementBatcherOptions<I> {
  /** At most this many items per statement. */
  maxItems: number;
  /** With maxWeight: a batch stops before its weights pass maxWeight (it always takes one item). */
  weight?(item: I): number;
  maxWeight?: number;
}

interface Waiting<I, O> {
  item: I;
  resolve(result: O): void;
  reject(error: unknown): void;
}

export class StatementBatcher<I, O> {
  private readonly busy = new Map<string, Array<Waiting<I, O>>>();

  /** `write` answers each item of a batch, in order. */
  constructor(
    private readonly write: (key: string, items: I[]) => Promise<O[]>,
    private readonly options: StatementBatcherOptions<I>,
  ) {}

  submit(key: string, item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      const waiting = this.busy.get(key);
      if (waiting) {
        waiting.push({ item, resolve, reject });
        return;
      }
      this.busy.set(key, []);
      void this.flush(key, [{ item, resolve, reject }]);
    });
  }

  private async flush(key: string, batch: Array<Waiting<I, O>>): Promise<void> {
    try {
      const results = await this.write(
        key,
        batch.map((w) => w.item),
      );
      batch.forEach((w, i) => w.resolve(results[i]));
    } catch (error) {
      if (batch.length === 1) batch[0].reject(error);
      else await Promise.all(batch.map((w) => this.write(key, [w.item]).then(([one]) => w.resolve(one), w.reject)));
    }
    const waiting = this.busy.get(key) ?? [];
    if (waiting.length === 0) {
      this.busy.delete(key);
      return;
    }
    void this.flush(key, this.take(waiting));
  }

  private take(waiting: Array<Waiting<I, O>>): Array<Waiting<I, O>> {
    const { maxItems, weight, maxWeight = Infinity } = this.options;
    let count = 0;
    let total = 0;
    while (count < waiting.length && count < maxItems) {
      const next = weight ? weight(waiting[count].item) : 0;
      if (count > 0 && total + next > maxWeight) break;
      total += next;
      count++;
    }
    return waiting.splice(0, count);
  }
}
