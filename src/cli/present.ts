import { Circuit, CircuitAdaptor, CircuitVersion, User, type CircuitAlias } from '../models';
import { badInput, notFound } from '../errors';
import { isUid } from '../ids';
import { presentRunPayload, runCredits } from '../runs';
import type { CircuitRun } from '../models/CircuitRun';
import type { ApiToken } from '../models';
import { aliasView } from '../views/alias.view';
import type { ApiTokenView } from '../views/api-token.view';
import { circuitView, versionView } from '../views/circuit.view';
import { snakeKeys } from '../views/snake-keys';
import { viewerView } from '../views/user.view';

export async function findUser(username: string): Promise<User> {
  const user = await User.findOne({ where: { username } });
  if (!user) throw notFound(`User ${username}`);
  return user;
}

export async function findCircuit(owner: User, name: string): Promise<Circuit> {
  const circuit = await Circuit.findOne({ where: { owner_uid: owner.uid, name } });
  if (!circuit) throw notFound(`Circuit ${owner.username}/${name}`);
  return circuit;
}

/**
 * `--circuit` of the list commands: a circuit uid, `owner/name`, or a bare name of `--username`'s
 * circuit. Unknown circuits and users are "not found" on one line.
 */
export async function findCircuitArg(value: string, username: string | undefined): Promise<Circuit> {
  // isUid narrows to string; a plain boolean keeps `value` a string below.
  const byUid: boolean = isUid(value);
  if (byUid) {
    const circuit = await Circuit.findByPk(value);
    if (!circuit) throw notFound(`Circuit ${value}`);
    return circuit;
  }
  const [owner, name] = value.includes('/')
    ? [value.slice(0, value.indexOf('/')), value.slice(value.indexOf('/') + 1)]
    : [username, value];
  if (owner === undefined) throw badInput('--circuit must be a circuit uid or owner/name (or a name with --username)');
  return findCircuit(await findUser(owner), name);
}

/**
 * The user as the operator sees them: the view the user has of themselves (GET /users/me), plus
 * whether they have a password, what is available of their credits and when they last changed;
 * never the password hash or tokens.
 */
export function restUser(user: User) {
  const credits = user.creditBalance;
  const held = Number(user.credits_held ?? 0);
  return {
    ...snakeKeys(viewerView(user, { credits, held })),
    has_password: user.password_hash !== null && user.password_hash !== undefined,
    available: Math.max(0, credits - held),
    updated_at: user.updated_at,
  };
}

/** The token as REST lists it (fragment RestApiToken); with `revoked` (its row), `revoked_at` too. */
export function restApiToken(view: ApiTokenView, revoked?: ApiToken) {
  return { ...snakeKeys(view), ...(revoked ? { revoked_at: revoked.revoked_at ?? null } : {}) };
}

/** The circuit as REST returns it (fragment RestCircuit). */
export async function restCircuit(circuit: Circuit, owner: User) {
  const adaptor = await CircuitAdaptor.findOne({
    where: { circuit_uid: circuit.uid, kind: 'query' },
    order: [['created_at', 'ASC']],
  });
  return snakeKeys(circuitView(circuit, owner.username, adaptor?.uid ?? ''));
}

/** Many circuits as restCircuit shows each, with one query for their owners and one for their adaptors. */
export async function restCircuits(circuits: Circuit[]) {
  const [owners, adaptors] = await Promise.all([
    User.findAll({
      where: { uid: [...new Set(circuits.map((circuit) => circuit.owner_uid))] },
      attributes: ['uid', 'username'],
    }),
    CircuitAdaptor.findAll({
      where: { circuit_uid: circuits.map((circuit) => circuit.uid), kind: 'query' },
      order: [['created_at', 'DESC']],
      attributes: ['uid', 'circuit_uid'],
    }),
  ]);
  const usernames = new Map(owners.map((user) => [user.uid, user.username]));
  // Newest first, so the Map keeps each circuit's oldest query adaptor, as restCircuit reads it.
  const adaptorOf = new Map(adaptors.map((adaptor) => [adaptor.circuit_uid, adaptor.uid]));
  return circuits.map((circuit) =>
    snakeKeys(circuitView(circuit, usernames.get(circuit.owner_uid) ?? '', adaptorOf.get(circuit.uid) ?? '')),
  );
}

/** The version as REST returns it (fragment RestCircuitVersion). */
export function restVersion(version: CircuitVersion, primaryVersionUid: string | null) {
  const { querySchema: _querySchema, ...view } = versionView(version, primaryVersionUid);
  return snakeKeys(view);
}

/** The alias as REST returns it (fragment RestCircuitAlias). */
export function restAlias(alias: CircuitAlias) {
  const { routes, ...view } = aliasView(alias);
  return { ...snakeKeys(view), routes: routes.map(snakeKeys) };
}

/**
 * The run as its owner sees it over REST, plus what only the operator sees: why it failed in the
 * worker's words, what it cost and held, and how often it was claimed.
 */
export function restRun(run: CircuitRun, username: string) {
  return {
    ...presentRunPayload(run, { mayDebug: true }),
    username,
    started_at: run.started_at ?? null,
    attempt: run.attempt,
    ...runCredits(run),
    failure_reason: run.failure_reason ?? null,
  };
}
