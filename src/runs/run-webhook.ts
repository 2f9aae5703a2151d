import { badInput } from '../errors';
import { DEFAULT_WEBHOOK_EVENTS, WEBHOOK_EVENTS, type WebhookEvent } from '../domain/webhook-events';

const MAX_URL_LENGTH = 2048;

export interface RunWebhook {
  url: string;
  events: WebhookEvent[];
}

/**
 * Checks a query's `webhook` and `webhook_events_filter`: an absolute https URL (http too where
 * private targets are allowed, i.e. for local receivers), without credentials; a non-empty subset of
 * the events. Whether the host is public is checked again at each delivery (DNS may change).
 */
export function parseRunWebhook(
  url: string | null | undefined,
  events: string[] | null | undefined,
  allowPrivate: boolean,
): RunWebhook | null {
  if (url === null || url === undefined) {
    if (events !== null && events !== undefined)
      throw badInput('webhook_events_filter needs a webhook', { field: 'webhook_events_filter' });
    return null;
  }
  if (typeof url !== 'string' || url.length > MAX_URL_LENGTH)
    throw badInput(`webhook must be a URL of at most ${MAX_URL_LENGTH} characters`, { field: 'webhook' });
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badInput('webhook is not a valid URL', { field: 'webhook' });
  }
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(parsed.protocol))
    throw badInput(`webhook must be an ${allowPrivate ? 'http or https' : 'https'} URL`, { field: 'webhook' });
  if (parsed.username || parsed.password) throw badInput('webhook must not carry credentials', { field: 'webhook' });
  if (events === null || events === undefined) return { url: parsed.href, events: DEFAULT_WEBHOOK_EVENTS };
  if (!Array.isArray(events) || events.length === 0 || events.length > WEBHOOK_EVENTS.length * 2) {
    throw badInput(`webhook_events_filter must list some of ${WEBHOOK_EVENTS.join(', ')}`, {
      field: 'webhook_events_filter',
    });
  }
  const unknown = events.find((event) => !(WEBHOOK_EVENTS as readonly string[]).includes(event));
  if (unknown !== undefined)
    throw badInput(
      `webhook_events_filter: unknown event ${JSON.stringify(String(unknown)).slice(0, 60)}; events are ${WEBHOOK_EVENTS.join(', ')}`,
      { field: 'webhook_events_filter' },
    );
  return { url: parsed.href, events: WEBHOOK_EVENTS.filter((event) => events.includes(event)) };
}
