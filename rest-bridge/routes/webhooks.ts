import type { Route } from '../route';
import { pageQuery, uidParam } from '../schemas';

const tag = 'Webhooks';

export const webhookRoutes: Route[] = [
  {
    method: 'GET',
    path: '/webhooks/default/secret',
    operation: 'GetWebhookSecret',
    summary: 'Your webhook signing secret ({key: "whsec_…"}), created on first read; rotate it in /settings',
    auth: 'required',
    tag,
    variables: () => ({}),
    result: 'webhookSecret',
  },
  {
    method: 'GET',
    path: '/circuit-runs/:uid/webhook-deliveries',
    operation: 'ListCircuitRunWebhookDeliveries',
    summary:
      "Attempts at delivering the run's webhook messages, oldest first (event, attempt, status_code, error, delivered_at); only the user who started the run",
    auth: 'required',
    tag,
    params: { uid: uidParam('Circuit run') },
    query: pageQuery(),
    variables: ({ params, query }) => ({ uid: params.uid, limit: query.limit, page: query.page }),
    result: 'circuitRunWebhookDeliveries',
    shape: 'page',
    omitWhenNull: ['step'],
  },
];
